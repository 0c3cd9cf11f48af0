"""Package data of hpc-hadoop (mapped to ``launcher._data.*`` by setup.py; read through launcher/resources.py)."""
