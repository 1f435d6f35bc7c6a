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

SOURCE = 'github.com/TheJJ/ceph-diskbench README.md, table "SSDs"'
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

#: Notes cells of older revisions of the same table, kept byte for byte, for rows whose later notes
#: dropped the contributor's per-job figures ((model, size) as in TABLE -> (revision, date, Notes cell)). The
#: same drives and measurements: 9b96c01 re-tabulated the rows with "1job IOPS" and "max IOPS"
#: columns and shortened the notes to a few words ("linear until capped", "asymptotic").
HISTORY: dict[tuple[str, str], tuple[str, str, str]] = {
    ("Intel SSD S4510", "480GB"): ("d9b7f08", "2021-06-26", "1 job: 16xx, 2:28xx, 3:33xx, 6: 42xx, 8-16:46xx-48xx"),
    ("Samsung PM1643a", "960GB"): (
        "d9b7f08",
        "2021-06-26",
        "1 job: 18545, 2: 33015, 3: 48855, 4: 60137, 5: 66992, 6: 76381, 7: 83164, 13: 90436, 16: 93229",
    ),
    ("Samsung SSD 860 PRO", "512GB"): (
        "5ecb742",
        "2020-11-19",
        "1 IOPS=1033, 2 IOPS=1937, 3 IOPS=1889, 4 IOPS=2257, 5 IOPS=2477, 6 IOPS=2775, 7 IOPS=3218, 8 IOPS=3731, 9 IOPS=4196, 10 IOPS=4598, 11 IOPS=4879, 12 IOPS=5186, 13 IOPS=5410, 14 IOPS=5774, 15 IOPS=5915, 16 IOPS=5897",
    ),
    ("Samsung SSD 860 EVO", "1TB"): (
        "5ecb742",
        "2020-11-19",
        "1 IOPS=490, 2 IOPS=868, 3 IOPS=603, 4 IOPS=734, 5 IOPS=758, 6 IOPS=928, 7 IOPS=1027 8 IOPS=959, 9 IOPS=1085 10 IOPS=1249 11 IOPS=1372 12 IOPS=1429 13 IOPS=1659 14 IOPS=1728 15 IOPS=1602 16 IOPS=1338",
    ),
}
