"""The benchmark harness (``hpc-hadoop bench``): dd, TestDFSIO, TeraSort and KMeans over sweeps, with
repeats, 95% confidence intervals, ``results.jsonl``, CSV, HiBench's ``hibench.report`` and plots."""
