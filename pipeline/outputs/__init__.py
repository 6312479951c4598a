"""Everything written into the output folder ``DIR`` (DESIGN §4), one module per file kind.

::

    files.py        atomic writes, never outside DIR
    folder.py       --mode error|overwrite|resume, and never a folder inside the store
    documents.py    ATIF documents and the media beside them
    parts.py        a batch's rows as Arrow IPC parts, and their assembly into shards
    parquet.py      Parquet shards and single files as ``datasets`` writes them
    markers.py      per-batch completion markers under DIR/.trajset/ (resume)
    manifest.py     DIR/manifest.json
    card.py         DIR/README.md, the dataset card
    tables_info.py  rows, sizes and checksums of the written shards
    audit.py        placeholders per rule in what is written (the redaction audit)
    validate.py     ``trajset validate DIR``
"""
