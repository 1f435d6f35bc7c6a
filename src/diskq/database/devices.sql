-- devices.db: the community device database, built by `diskq db build` from submissions/.
--
-- The build executes this file verbatim on an empty database. The one exception is the block
-- between the "fts5-trigram" markers: it is left out when the SQLite library has no trigram
-- tokenizer (SQLite < 3.34), meta.fts then says 'none' and lookups scan the devices table.
-- Foreign keys are declared (SQLite tools show the links) and checked by the build.
--
-- Units: IOPS are 4 KiB write+fdatasync pairs per second, latencies are microseconds, sizes bytes.
-- "cache" / "write_cache" is the write cache state during the run: 'on', 'off', 'unknown'; "knob" is
-- what set or read it: 'drive' (hdparm, sdparm, NVMe feature 6, or not recorded) or 'kernel' (the
-- kernel's /sys/block/X/queue/write_cache, the only knob on loop, zram and virtio devices: 'off'
-- there means the kernel sends no flushes, the drive's own cache is not touched). Settings of the
-- two knobs are never aggregated together.

-- Facts about the build itself: schema_version, content_digest, counts, fts mode, data_as_of (newest
-- measurement date of a non-legacy submission, '' when there is none),
-- allowed_signers ('none', or 'sha256:<digest of the file>' given to the build).
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- One row per accepted submission file.
CREATE TABLE submissions (
    id             TEXT PRIMARY KEY,
    device_id      TEXT NOT NULL REFERENCES devices (id),
    path           TEXT NOT NULL,       -- relative to the submissions directory
    sha256         TEXT NOT NULL,       -- of the file's bytes
    created        TEXT,                -- when the result was measured (UTC, ISO 8601); NULL when not
                                        -- recorded (legacy rows: their documents carry the import date)
    legacy         INTEGER NOT NULL,    -- 1: imported figures, not measured by diskq
    verified       INTEGER NOT NULL,    -- 1: signature = 'verified'
    signer         TEXT,                -- principal the signature names (GitHub login); checked only when verified
    contributor    TEXT,
    source         TEXT,                -- provenance of legacy / imported figures
    model          TEXT NOT NULL,       -- as reported by the drive
    vendor         TEXT,
    firmware       TEXT,
    capacity_bytes INTEGER,
    protocol       TEXT,
    media          TEXT,
    method_id      TEXT NOT NULL,
    method_version INTEGER NOT NULL,
    aggregated     INTEGER NOT NULL,    -- 1: counted in its device's figures (same method as the majority,
                                        -- not an outlier, not a host's result among a drive's; see excluded)
    fio_version    TEXT,
    kernel         TEXT,
    diskq_version  TEXT,
    volatile_write_cache INTEGER,       -- 1/0: the drive reports a volatile write cache / none; NULL: unknown
    signature      TEXT NOT NULL,       -- 'verified': intact and the key is listed for signer in the
                                        --   allowed-signers file given to the build (meta.allowed_signers);
                                        -- 'intact': intact, signer not checked (the build had no such file);
                                        -- 'unlisted': intact, key not listed there for signer;
                                        -- 'unchecked': signed, the validator was not available; 'unsigned'
    figures_digest TEXT NOT NULL,       -- sha256 of the measured figures of every run: a file with the digest
                                        -- of an earlier one (in path order, any model) is a duplicate, skipped
    not_drive      TEXT,                -- why the result measures a host (loop, zram, virtio, dm, md, RAID
                                        -- volume, a file), not a drive model; NULL: a drive
    excluded       TEXT                 -- why it is not aggregated (aggregated = 0): another method, far
                                        -- outside the model's other submissions, a host's result
);
CREATE INDEX submissions_device ON submissions (device_id);

-- One row per sweep (one write-cache state) in a submission.
CREATE TABLE runs (
    submission_id   TEXT NOT NULL REFERENCES submissions (id),
    run             INTEGER NOT NULL,   -- index in the document's runs list
    write_cache     TEXT NOT NULL,
    cache_mechanism TEXT,               -- hdparm, sdparm, nvme, sysfs (the kernel's knob), or NULL
    cache_changed   INTEGER NOT NULL,   -- 1: diskq switched the cache for this run
    flush_ok        INTEGER,            -- 0: the flush check caught the drive ignoring flushes; NULL: not checked
    iops_1job       REAL,
    max_iops        REAL,
    peak_jobs       INTEGER,
    p99_sync_us     REAL,               -- p99 fdatasync latency at numjobs=1
    source_peak_final INTEGER NOT NULL, -- 1: the source (community table) measured beyond the highest point
                                        --    and IOPS did not rise there ("peak #jobs" is the sweep's peak)
    source_words    TEXT,               -- the contributor's own words about the curve, as published
    PRIMARY KEY (submission_id, run)
) WITHOUT ROWID;

-- Every measured point, as submitted (fio's raw JSON stays in the submission file).
CREATE TABLE points (
    submission_id TEXT NOT NULL,
    run           INTEGER NOT NULL,
    seq           INTEGER NOT NULL,     -- index in the run's points list
    numjobs       INTEGER NOT NULL,
    iops          REAL NOT NULL,
    bw_bytes      REAL,
    lat_mean_us   REAL,
    lat_p99_us    REAL,
    sync_mean_us  REAL,
    sync_p99_us   REAL,
    interrupted   INTEGER NOT NULL,
    conflict      TEXT,                 -- figures without raw fio output that cannot both be right
                                        -- (criteria [plausibility]): the conflict, and what decided it; NULL: none
    held          INTEGER NOT NULL,     -- 1: held out of every curve and verdict by its conflict (shown here)
    PRIMARY KEY (submission_id, run, seq),
    FOREIGN KEY (submission_id, run) REFERENCES runs (submission_id, run)
) WITHOUT ROWID;

-- Every step of each run's block-size profile (diskq bench --profile sizes), as submitted: 1 job,
-- each write of block_size bytes followed by fdatasync. IOPS here are write+fdatasync pairs of that size.
CREATE TABLE size_points (
    submission_id  TEXT NOT NULL,
    run            INTEGER NOT NULL,    -- index in the document's runs list
    seq            INTEGER NOT NULL,    -- index in the profile's points list
    block_size     INTEGER NOT NULL,    -- bytes per write
    iops           REAL NOT NULL,
    bw_bytes       REAL NOT NULL,       -- bytes per second
    lat_p50_us     REAL,                -- write latency (median, p99) ...
    lat_p99_us     REAL,
    sync_p50_us    REAL,                -- ... and fdatasync latency (median, p99)
    sync_p99_us    REAL,
    interrupted    INTEGER NOT NULL,
    method_id      TEXT NOT NULL,       -- the profile's method; only diskq-size-profile version 2 is aggregated
    method_version INTEGER NOT NULL,
    PRIMARY KEY (submission_id, run, seq),
    FOREIGN KEY (submission_id, run) REFERENCES runs (submission_id, run)
) WITHOUT ROWID;

-- One row per device (model normalised for case and white space, plus firmware): the row of
-- the suitability table, at the device's best safe cache setting. rank orders the table; hosts
-- and virtual devices (not_drive) have no rank and are never in the drive table.
CREATE TABLE devices (
    id              TEXT PRIMARY KEY,   -- URL slug
    rank            INTEGER UNIQUE,     -- NULL for a host or virtual device (not_drive)
    model           TEXT NOT NULL,      -- the most common spelling
    model_key       TEXT NOT NULL,      -- case folded, white space collapsed
    vendor          TEXT,
    firmware        TEXT NOT NULL,      -- '' when unknown
    capacity_bytes  INTEGER,
    protocol        TEXT NOT NULL,
    media           TEXT NOT NULL,
    volatile_write_cache INTEGER,       -- 1: some submission reports a volatile cache; 0: all report none; NULL: unknown
    cache           TEXT,               -- best safe cache setting: its state ...
    cache_knob      TEXT,               -- ... and its knob (drive | kernel)
    iops_1job       REAL,
    max_iops        REAL,
    peak_jobs       INTEGER,
    scaling         TEXT,               -- linear | asymptotic | regressing
    p99_sync_us     REAL,
    osds_per_device INTEGER,            -- 0: not even one OSD gets its commit rate ("none")
    osds_limited_by_sweep INTEGER,      -- 1: the largest tested job count still passed: "at least osds_per_device"
    osds_per_osd_iops REAL,             -- commits/s each of the osds_per_device OSDs gets (IOPS(n)/n)
    osds_demand_iops REAL,              -- commits/s one OSD needs (criteria: demand_hdd_osd)
    osds_order      REAL,               -- sorts by what a device carries: n + r/(r + demand), r the per-OSD
                                        -- rate (the 1-job rate when n = 0); never lower for a faster device
    ceph_waldb      TEXT,
    etcd            TEXT,
    postgres_wal    REAL,               -- commits/s one PostgreSQL session can make (WAL fdatasync)
    zfs_slog        TEXT,               -- ZFS SLOG tier (excellent | good | marginal | unsuitable) from the 128 KiB
                                        -- step of the block-size profile; verdicts.zfs_slog.basis says whether it
                                        -- was measured or estimated from 4 KiB (NULL: no tier can be told)
    power_loss_protection TEXT,         -- confirmed | likely | unlikely | unknown | degraded (evidence, not a promise)
    plp_evidence    TEXT,               -- JSON: that verdict's rule, reasons, conflicts and every piece of evidence
    submissions     INTEGER NOT NULL,
    verified        INTEGER NOT NULL,   -- how many have signature = 'verified'
    unchecked       INTEGER NOT NULL,   -- how many have signature = 'intact' (signer not checked)
    legacy          INTEGER NOT NULL,   -- how many of the submissions are legacy imports
    method_id       TEXT NOT NULL,
    method_version  INTEGER NOT NULL,
    verdicts        TEXT,               -- JSON: the full verdicts for the row's curve
    notes           TEXT NOT NULL,      -- JSON list of sentences
    not_drive       TEXT,               -- why this measures a host, not a drive model: not ranked; NULL: a drive
    method_class    TEXT NOT NULL,      -- what the method sent to the drive on this protocol (method_classes.toml):
                                        -- 'flush/write/raw/direct' for diskq bench and the fdatasync command, and
                                        -- for O_SYNC on SATA; 'fua/...' for O_SYNC on NVMe and SAS
    class_rank      INTEGER,            -- position within its method_class (rows of different classes are never
                                        -- ranked against each other; rank orders the table: classes, then IOPS)
    family_key      TEXT NOT NULL,      -- vendor + family (diskq.database.modelid): what public figures join on
    answers         TEXT                -- JSON: the answer per use (diskq.analyse.answer): {ceph_waldb, zfs_slog,
                                        -- etcd, postgres_wal: {tier, basis, reasons, ...}}; the columns ceph_waldb,
                                        -- osds_per_device, etcd and zfs_slog are read from it
);
CREATE INDEX devices_model_key ON devices (model_key);

-- Per device and cache state: medians over submissions, with their spread.
CREATE TABLE device_cache (
    device_id       TEXT NOT NULL REFERENCES devices (id),
    write_cache     TEXT NOT NULL,
    knob            TEXT NOT NULL,      -- drive | kernel
    submissions     INTEGER NOT NULL,
    verified        INTEGER NOT NULL,
    legacy          INTEGER NOT NULL,
    safe            INTEGER NOT NULL,   -- 0: never the basis of a verdict (see unsafe_reason)
    unsafe_reason   TEXT,               -- a flush check failed, or 'off' by the kernel knob on a drive that may cache
    iops_1job       REAL,
    iops_1job_min   REAL,
    iops_1job_max   REAL,
    max_iops        REAL,
    max_iops_min    REAL,
    max_iops_max    REAL,
    peak_jobs       INTEGER,
    p99_sync_us     REAL,
    p99_sync_us_min REAL,
    p99_sync_us_max REAL,
    scaling         TEXT,
    scaling_json    TEXT,               -- JSON: the analysis of the median curve
    source_words    TEXT,               -- the contributor's words about this curve (one community-table row)
    PRIMARY KEY (device_id, write_cache, knob)
) WITHOUT ROWID;

-- The median curve per device and cache state: one row per numjobs.
CREATE TABLE curve (
    device_id   TEXT NOT NULL,
    write_cache TEXT NOT NULL,
    knob        TEXT NOT NULL,
    numjobs     INTEGER NOT NULL,
    iops        REAL NOT NULL,          -- median over submissions that measured this numjobs
    iops_min    REAL NOT NULL,
    iops_max    REAL NOT NULL,
    n           INTEGER NOT NULL,
    lat_mean_us  REAL,                  -- medians over submissions of the write latency (mean, p99) ...
    lat_p99_us   REAL,
    sync_mean_us REAL,                  -- ... and of the fdatasync latency (mean, p99)
    sync_p99_us  REAL,
    PRIMARY KEY (device_id, write_cache, knob, numjobs),
    FOREIGN KEY (device_id, write_cache, knob) REFERENCES device_cache (device_id, write_cache, knob)
) WITHOUT ROWID;

-- The median block-size profile per device and cache setting: one row per block size, over the
-- counted submissions whose run at that setting measured it (interrupted steps left out).
CREATE TABLE device_sizes (
    device_id   TEXT NOT NULL,
    write_cache TEXT NOT NULL,
    knob        TEXT NOT NULL,
    block_size  INTEGER NOT NULL,
    iops        REAL NOT NULL,          -- median over submissions
    iops_min    REAL NOT NULL,
    iops_max    REAL NOT NULL,
    bw_bytes    REAL NOT NULL,          -- median bytes per second
    lat_p50_us  REAL,                   -- medians of the write latency (median, p99) ...
    lat_p99_us  REAL,
    sync_p50_us REAL,                   -- ... and of the fdatasync latency (median, p99)
    sync_p99_us REAL,
    n           INTEGER NOT NULL,
    PRIMARY KEY (device_id, write_cache, knob, block_size),
    FOREIGN KEY (device_id, write_cache, knob) REFERENCES device_cache (device_id, write_cache, knob)
) WITHOUT ROWID;

-- Every sustained-write measurement (diskq bench --profile sustained), as submitted: fio's
-- throughput per sample interval and the cliff the validated document states. Bytes per second,
-- bytes, seconds.
CREATE TABLE sustained (
    submission_id      TEXT NOT NULL REFERENCES submissions (id),
    seq                INTEGER NOT NULL,   -- index in the document's sustained list
    method_version     INTEGER NOT NULL,   -- of diskq-sustained-write
    variant            TEXT NOT NULL,      -- fdatasync (1 job, fdatasync after every write) | sequential
                                           -- (plain direct writes at a high queue depth)
    write_cache        TEXT NOT NULL,      -- the state the device was found in
    cache_mechanism    TEXT,
    block_size         INTEGER NOT NULL,
    iodepth            INTEGER NOT NULL,
    budget_bytes       INTEGER,            -- the budget it was given: bytes ...
    budget_s           INTEGER,            -- ... or seconds
    written_bytes      INTEGER NOT NULL,
    runtime_ms         INTEGER NOT NULL,
    iops               REAL NOT NULL,
    bw_bytes           REAL NOT NULL,      -- over the whole write
    sample_interval_ms INTEGER NOT NULL,
    bw_samples         TEXT NOT NULL,      -- JSON list: throughput in each sample interval, in order
    cliff_found        INTEGER,            -- 1: the throughput fell; 0: it never did; NULL: no cliff analysis
    cliff_at_s         REAL,               -- where the drop starts: seconds into the write ...
    cliff_at_bytes     INTEGER,            -- ... and bytes written
    cliff_before_bw_bytes REAL,            -- typical throughput before the drop ...
    cliff_after_bw_bytes  REAL,            -- ... and after it
    cliff_drop_pct     REAL,
    interrupted        INTEGER NOT NULL,   -- 1: stopped before its budget; listed, never aggregated
    PRIMARY KEY (submission_id, seq)
) WITHOUT ROWID;

-- Per device, variant and cache setting: what the counted submissions' sustained writes say
-- (the device's most common method version, interrupted writes left out).
CREATE TABLE device_sustained (
    device_id          TEXT NOT NULL REFERENCES devices (id),
    variant            TEXT NOT NULL,
    write_cache        TEXT NOT NULL,
    knob               TEXT NOT NULL,      -- drive | kernel | unknown, as in device_cache
    method_version     INTEGER NOT NULL,
    measurements       INTEGER NOT NULL,
    cliffs             INTEGER NOT NULL,   -- how many of them found a cliff
    cliff_at_bytes_min INTEGER,            -- the earliest cliff: bytes written before the drop, at worst
    cliff_at_bytes_max INTEGER,
    cliff_at_s_min     REAL,
    drop_pct_max       REAL,               -- the largest drop seen
    before_bw_bytes    REAL,               -- median over the cliffs found of the throughput before the drop
    after_bw_bytes_min REAL,               -- the lowest throughput after a drop
    bw_bytes           REAL NOT NULL,      -- median over the measurements of the whole write's throughput
    written_bytes_max  INTEGER NOT NULL,   -- the longest write: with no cliff, none within this many bytes
    block_size         INTEGER NOT NULL,   -- the most common among the measurements
    iodepth            INTEGER NOT NULL,
    PRIMARY KEY (device_id, variant, write_cache, knob)
) WITHOUT ROWID;

-- Public figures: the catalogue of the repository's sources/ directory (docs/methodology.md).
-- Each source once, with the attribution its licence asks for.
CREATE TABLE sources (
    id          TEXT PRIMARY KEY,
    title       TEXT NOT NULL,
    url         TEXT NOT NULL,
    author      TEXT NOT NULL,
    date        TEXT NOT NULL,
    licence     TEXT NOT NULL,
    attribution TEXT NOT NULL,
    method_ids  TEXT NOT NULL,          -- JSON list
    notes       TEXT NOT NULL,
    figures     INTEGER NOT NULL        -- how many figures it gives
) WITHOUT ROWID;

-- Each method of a public figure once: the exact command and what it sends.
CREATE TABLE methods (
    id          TEXT PRIMARY KEY,
    command     TEXT NOT NULL,
    sync        TEXT NOT NULL,          -- fdatasync | fsync | o_sync | o_dsync | o_sync+fsync | flush
    pattern     TEXT NOT NULL,          -- write | randwrite
    engine      TEXT NOT NULL,
    iodepth     INTEGER NOT NULL,
    direct      INTEGER NOT NULL,
    target      TEXT NOT NULL,          -- raw | file
    runtime_s   INTEGER,
    block_size  TEXT NOT NULL,
    notes       TEXT NOT NULL
) WITHOUT ROWID;

-- A model of the public figures: vendor + family + capacity.
CREATE TABLE models (
    id             TEXT PRIMARY KEY,
    family_key     TEXT NOT NULL,       -- joins devices.family_key
    vendor         TEXT NOT NULL,
    family         TEXT NOT NULL,
    capacity_bytes INTEGER,             -- NULL: the source does not say
    name           TEXT NOT NULL,       -- vendor family capacity
    protocol       TEXT NOT NULL        -- as the first figure's source names the interface
) WITHOUT ROWID;
CREATE INDEX models_family ON models (family_key);

-- Every public figure, as the source gives it.
CREATE TABLE figures (
    source_id    TEXT NOT NULL REFERENCES sources (id),
    seq          INTEGER NOT NULL,      -- order in the source's file
    model_id     TEXT NOT NULL REFERENCES models (id),
    model        TEXT NOT NULL,         -- as the source writes it
    firmware     TEXT NOT NULL,
    interface    TEXT NOT NULL,         -- SATA | SAS | NVMe | PCIe | other
    protocol     TEXT NOT NULL,         -- ata | scsi | nvme | pcie | unknown
    method_id    TEXT NOT NULL REFERENCES methods (id),
    method_class TEXT NOT NULL,         -- the method on this interface (method_classes.toml)
    numjobs      INTEGER NOT NULL,
    iodepth      INTEGER NOT NULL,
    iops         REAL NOT NULL,
    write_cache  TEXT NOT NULL,         -- on | off | unknown (the source does not say)
    derived      TEXT NOT NULL,         -- how the IOPS were computed from what the source printed; '' when quoted
    quote        TEXT NOT NULL,         -- the row or line as published
    url          TEXT NOT NULL,
    checked      TEXT NOT NULL,         -- when the row was checked against its source
    location     TEXT NOT NULL,         -- file and line in sources/
    weak         TEXT NOT NULL,         -- why the figure is weak (a buffered run, a run under a second); '' when not
    PRIMARY KEY (source_id, seq)
) WITHOUT ROWID;
CREATE INDEX figures_model ON figures (model_id);

-- Per public model, method class, write-cache state and method: the sources' 1-job figures of that
-- method (median, spread), the best figure and its job count; ranked within the class and the cache
-- state only (a cache-on and a cache-off figure are never one number), one row per method (figures of
-- two methods are never one number either). Weak rows are flagged and not ranked.
CREATE TABLE model_class (
    model_id     TEXT NOT NULL REFERENCES models (id),
    method_class TEXT NOT NULL,
    write_cache  TEXT NOT NULL,         -- on | off | unknown, as the sources say
    method_id    TEXT NOT NULL REFERENCES methods (id),
    iops_1job    REAL,                  -- median of the sources' 1-job figures of this method; NULL: none
    iops_1job_min REAL,
    iops_1job_max REAL,
    best_iops    REAL NOT NULL,
    best_numjobs INTEGER NOT NULL,
    sources      TEXT NOT NULL,         -- JSON list of source ids
    figures      INTEGER NOT NULL,
    weak         TEXT,                  -- JSON list of why the row is weak (buffered, under a second, methods of its
                                        -- class disagreeing on a raw device); NULL: not weak
    class_rank   INTEGER,               -- within (method_class, write_cache) among rows not weak; NULL: weak, not ranked
    PRIMARY KEY (model_id, method_class, write_cache, method_id)
) WITHOUT ROWID;

-- Product lines (sources/lines/, docs/identity.md): what a drive is before anything is measured,
-- and the names and part numbers that identify it; every family with figures belongs to one.
CREATE TABLE lines (
    key           TEXT PRIMARY KEY,     -- the family key of its name (samsung:pm863a)
    vendor        TEXT NOT NULL,
    line          TEXT NOT NULL,        -- as its source names it (5300 PRO/MAX)
    title         TEXT NOT NULL,        -- vendor and name (Micron 5300)
    segment       TEXT,                 -- data-centre | client | NAS; NULL: unknown
    interface     TEXT,                 -- SATA | SAS | NVMe; NULL: unknown
    plp           TEXT,                 -- yes | at-rest-only | no | not stated; NULL: no source read
    names         TEXT NOT NULL,        -- JSON list: what a query or a model string calls it
    parts         TEXT NOT NULL,        -- JSON list of part-number patterns {pattern, capacity, source, certain, shared}
    model_strings TEXT,                 -- model strings its source lists, as written there
    facts         TEXT NOT NULL         -- JSON: diskq.identity.facts.LineFacts, each fact as its source states it
) WITHOUT ROWID;

-- Which line each family key of devices and public models belongs to.
CREATE TABLE line_families (
    family_key TEXT PRIMARY KEY,        -- devices.family_key, models.family_key
    line_key   TEXT NOT NULL REFERENCES lines (key)
) WITHOUT ROWID;

-- The answer per use for each public model (diskq.analyse.answer.from_public), in the shape of
-- devices.answers: what every face shows for a model known only from public figures.
-- (A rowid table: its rows are large, which WITHOUT ROWID stores badly.)
CREATE TABLE public_answers (
    model_id TEXT PRIMARY KEY REFERENCES models (id),
    answers  TEXT NOT NULL              -- JSON: {ceph_waldb, zfs_slog, etcd, postgres_wal: {tier, basis, reasons, ...}}
);

-- The answer per use for each product line (diskq.database.answers.write_lines): what its
-- datasheet facts allow and what its peers' figures estimate (basis datasheet or estimate), with
-- the power-loss verdict its facts give; what lookup answers for a line nothing was measured on.
CREATE TABLE line_answers (
    line_key TEXT PRIMARY KEY REFERENCES lines (key),
    answers  TEXT NOT NULL              -- JSON: {ceph_waldb, zfs_slog, etcd, postgres_wal, power_loss_protection}
) WITHOUT ROWID;

-- Files that were not accepted, and why: the build reports them, it does not hide them.
CREATE TABLE skipped (
    path    TEXT NOT NULL,
    field   TEXT NOT NULL,
    message TEXT NOT NULL
);

-- fts5-trigram:begin
CREATE VIRTUAL TABLE device_search USING fts5 (
    device_id UNINDEXED,
    text,
    tokenize = 'trigram'
);

-- Full-text search of devices for SQLite tools, named and attached as sqlite-utils names one
-- (`sqlite-utils search devices.db devices pm883`, Datasette's search box): an external-content
-- index of devices' model, vendor and firmware by rowid, filled by the build ('rebuild').
-- diskq lookup uses device_search, which also finds fragments and typos.
CREATE VIRTUAL TABLE devices_fts USING fts5 (
    model, vendor, firmware,
    content=[devices]
);
-- fts5-trigram:end
