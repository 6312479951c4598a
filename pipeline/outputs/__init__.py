"""The files of the output folder ``DIR`` (DESIGN §4), one module per file kind; none of
them imports the run machinery (``run/``), which hands them plain data.

::

    files.py        atomic writes, never outside DIR
    folder.py       --mode error|overwrite|resume, and never a folder inside the store
    documents.py    ATIF documents and the media beside them
    parquet.py      Parquet shards and single files as ``datasets`` writes them
    markers.py      per-batch parts' paths and completion markers under DIR/.trajset/ (resume)
    manifest.py     DIR/manifest.json
    card.py         DIR/README.md, the dataset card
    tables_info.py  rows, sizes and checksums of the written shards
    audit.py        placeholders per rule in what is written (the redaction audit)
    validate.py     ``trajset validate DIR``
    remote.py       ``--out URL``: a stage folder copied to object storage, the manifest last
"""
