"""Checkpoints: snapshots of a session's workspace in a private git object store, and restores.

``store.py`` is the store of one workspace (its own ``GIT_DIR``, index and lock under pi's agent
directory), ``snapshot.py`` captures the workspace into it, ``restore.py`` plans and writes
restores and their undo, ``entries.py`` links snapshots into a session's tree, ``gc.py`` prunes
what no session references. See docs/checkpoints.md.
"""
