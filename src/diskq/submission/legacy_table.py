"""The community Ceph disk benchmark table, as published: the source of the legacy submissions.

Source: github.com/TheJJ/ceph-diskbench, README.md, section "List of Devices" / "SSDs".
Licence: CC0 1.0 ("This information is released under CC0").
Method the rows were measured with (one run per numjobs, write cache as in the cache column),
as the guide stated it from its first commit (eeac118, 2018-11-21) to d9b7f08 (2021-06-26)::

    fio --filename=/dev/device --direct=1 --sync=1 --iodepth=1 --runtime=60 --time_based \
        --rw=write --bs=4k --numjobs=[JOBCOUNT] --group_reporting --name=ceph-journal-write-test

The guide shows ``--fdatasync=1 --runtime=20`` since 9b96c01 (2021-06-28), which re-tabulated the
existing rows with their figures unchanged; no drive was added after it.

Columns: "1job IOPS" is the IOPS at one job, "max IOPS" the IOPS at "peak #Jobs", "cache" the
``hdparm -W`` state ("-" when not stated). The text below is kept byte for byte.
"""

SOURCE = "github.com/TheJJ/ceph-diskbench README.md, table \"SSDs\""
LICENSE = "CC0-1.0"

TABLE = """\
### SSDs

| ID                             |    Size | Proto      | 1job IOPS | max IOPS | peak #Jobs | cache | Notes   |
|--------------------------------|--------:|------------|----------:|---------:|-----------:|-------|---------|
| Intel SSD 750 PCIe             |   400GB | NVMe       |     64235 |   192440 |          8 |     - | asymptotic |
| Samsung MZQLW960HMJP-00003     |   960GB | NVMe       |     34090 |   268030 |         16 |     - | linear up to ~8 jobs, then asymptotic |
| Samsung PM1643a                |   960GB | SAS        |     18545 |    93229 |         16 |     - | asymptotic |
| Samsung PM863a                 |   240GB | SATA       |     17983 |    58876 |         10 |   off | asymptotic |
| Samsung PM883                  |  7.68TB | SATA3.2 6G |     12680 |    59338 |         16 |   off | asymptotic; cache on: 5094 @ 1job, 27521 @16 |
| Pliant LB206S MS04             |   200GB | SAS        |      5028 |     5028 |          1 |     - | more jobs slow down. 2: 2651, 6: 1088, 8: 745, 10: 784 |
| Samsung 983DCT                 |   960GB | NVMe       |      4000 |    22570 |          8 |     - | asymptotic |
| WD Blue WDS100T2B0A-00SM50     |     1TB | SATA       |      1751 |     2225 |          2 |   off | 2 jobs already saturate |
| Intel SSD S4510                |   480GB | SATA       |      1600 |    48409 |         15 |   off | linear until capped |
| Intel SSD 545                  |   512GB | SATA       |      1500 |     6460 |          8 |     - | asymptotic |
| Samsung PM961                  |   128GB | NVMe       |      1480 |     1480 |          1 |     - | more jobs slow down. 2: 818, 3: 1092, 4: 525, 5: 569 |
| Transcend SSD 220s             |     1TB | NVMe       |      1420 |     5760 |          8 |     - | asymptotic |
| LENSE20512GMSP34MEAT2TA        |   512GB | NVMe       |      1150 |     3164 |          4 |     - | asymptotic |
| Samsung SSD 860 PRO            |   512GB | SATA       |      1033 |     5915 |         15 |     - | asymptotic |
| Sandisk Extreme Pro            |   960GB | SATA       |       860 |     3400 |          8 |     - | linear until capped |
| Sandisk Ultra II               |   960GB | SATA       |       600 |     3640 |          8 |     - | linear until capped |
| Samsung SSD 860 EVO            |     1TB | SATA       |       490 |     1728 |         14 |     - | linear until capped |
| Samsung SSD 970 PRO            |   512GB | NVMe       |       456 |      840 |          2 |     - | 2 jobs already saturate |
| Samsung MZVLB512HAJQ-000L7     |   512GB | NVMe       |       384 |     1164 |         10 |     - | linear until capped |

Entries are sorted by 1-job IOPS.
"""
