"""Package data, mapped here at build time by ``setup.py`` from the checkout's ``templates/``, ``site-configs/``,
``examples/`` and ``hadoop-fs-shim/``; read only through :mod:`launcher.util.resources`."""
