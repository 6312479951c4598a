"""The run machinery: how an export turns units into files, in one place.

::

    driver.py    run_export: discover units, cut batches, run them through an executor,
                 assemble the shards, write errors, manifest and card (the driver process)
    batches.py   units cut into batches, independent of the worker count
    worker.py    what an executor runs: a batch of units through the chain, rows into parts
    context.py   RunContext (frozen, travels to every worker, RunSettings included),
                 Runtime (built there once) and the UnitScope of one unit
    chain.py     the per-unit chain, declared once, and the one function that runs it
    stages.py    the stages of the chain: read, redact, enumerate, export, where
    write.py     the chain's last stage: table rows and documents written
    ledger.py    what a unit read, exported, failed, dropped and redacted
    stats.py     per-stage counts and times
    results.py   what a unit, a batch and the run hand back
    parts.py     a batch's rows as Arrow IPC parts, and their assembly into shards
"""
