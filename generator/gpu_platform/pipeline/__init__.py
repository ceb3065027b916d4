"""The chart pipeline: values files -> typed model -> checks -> resolved values -> chart files.

Each stage is a module and only reads the stages before it: ``load`` knows nothing of the
model, ``rules`` never writes, ``emit`` takes what the checks produced and never re-runs them.
``run`` is the driver (``check_files``, ``check_data``, ``check_defaults``). ``facts`` and
the registries are the data every stage reads; ``quantity`` (Kubernetes quantities as exact
numbers) serves the rules, lint and diff alike.
"""
