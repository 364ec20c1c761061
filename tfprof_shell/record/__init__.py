"""`tfprof record`: profile an unmodified TensorFlow, PyTorch or JAX program from outside.

The launcher (:mod:`.launcher`) runs a command with ``armed/`` first on
``PYTHONPATH`` and the settings in ``TFPROF_RECORD``. Every Python process of
the job then runs ``armed/sitecustomize.py``, which only installs an import
hook; when a framework is imported, :mod:`.hooks` arms that framework's
recorder (:mod:`.tf1` for ``Session.run``, :mod:`.tf2` for Keras ``fit``,
``tf.function`` calls and optimizer updates, :mod:`.pytorch` for optimizer
steps and module calls, :mod:`.jax_trace` for jitted calls) and the process
writes its own folder (:mod:`.layout`) as it records.

Nothing here runs in the ``tfprof`` shell; the loader reads the folders.
"""
