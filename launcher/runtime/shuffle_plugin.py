"""The Java names of hpc-hadoop's shared-filesystem shuffle plugin (``hadoop-fs-shim``) and of Hadoop's own shuffle.

Constants only: the configuration renderer (:mod:`launcher.render.config`) writes them into ``mapred-site.xml``
and the step-level reader of the shuffle's counters (:mod:`launcher.steps.shuffle`) re-exports them; they live
with the runtime they name so that rendering does not import a step-level module (issue 26).
"""

#: The shared-filesystem shuffle plugin (``mapreduce.job.reduce.shuffle.consumer.plugin.class``).
PLUGIN_CLASS = "org.apache.hadoop.mapreduce.task.reduce.SharedFsShuffle"
#: Hadoop's own shuffle (the default of that property): every map output fetched over HTTP.
HADOOP_SHUFFLE = "org.apache.hadoop.mapreduce.task.reduce.Shuffle"
#: The job property that tells the plugin each NodeManager's local dir: ``host=dir`` entries, comma-separated.
LOCAL_DIRS_PROPERTY = "hpchadoop.shuffle.shared.local-dirs"
