"""The files of the output folder ``DIR`` (DESIGN §4), one module per file kind; none of
them knows the run (the run's own files, parts, markers and the manifest, are in ``run/``).

::

    files.py        atomic writes, never outside DIR
    folder.py       --mode error|overwrite|resume, and never a folder inside the store
    documents.py    ATIF documents and the media beside them
    parquet.py      Parquet shards and single files as ``datasets`` writes them
    card.py         DIR/README.md, the dataset card
    tables_info.py  rows, sizes and checksums of the written shards
    audit.py        placeholders per rule in what is written (the redaction audit)
    validate.py     ``trajset validate DIR``
"""
