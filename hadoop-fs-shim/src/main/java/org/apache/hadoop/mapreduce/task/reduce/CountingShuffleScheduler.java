package org.apache.hadoop.mapreduce.task.reduce;

import java.io.IOException;
import org.apache.hadoop.mapred.Counters;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.Reporter;
import org.apache.hadoop.mapred.TaskStatus;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.util.Progress;
import org.hpchadoop.shuffle.SharedMapOutputs;

/**
 * Hadoop's shuffle scheduler, counting each map output it accepts as read directly (from the
 * shared filesystem) or fetched over HTTP, in the counters of {@link SharedMapOutputs}.
 *
 * <p>Hpc-hadoop's class, in Hadoop's package only because {@link SharedFsShuffle} must be (see
 * there). A duplicate copy of a map that was already shuffled is ignored by Hadoop and not counted:
 * the counts are what {@code copySucceeded} added to the task's {@code REDUCE_SHUFFLE_BYTES} and
 * {@code SHUFFLED_MAPS}.
 */
class CountingShuffleScheduler<K, V> extends ShuffleSchedulerImpl<K, V> {
  private final Counters.Counter shuffledMaps;
  private final Counters.Counter shuffleBytes;
  private final Reporter reporter;
  /** Whether the copy being accepted was read directly (guarded by this). */
  private boolean direct;
  private long directBytes;
  private long httpBytes;
  private long directMaps;
  private long httpMaps;

  @SuppressWarnings("checkstyle:ParameterNumber")
  CountingShuffleScheduler(JobConf job, TaskStatus status, TaskAttemptID reduceId,
      ExceptionReporter exceptionReporter, Progress progress, Counters.Counter shuffledMaps,
      Counters.Counter shuffleBytes, Counters.Counter failedShuffles, Reporter reporter) {
    super(job, status, reduceId, exceptionReporter, progress, shuffledMaps, shuffleBytes,
        failedShuffles);
    this.shuffledMaps = shuffledMaps;
    this.shuffleBytes = shuffleBytes;
    this.reporter = reporter;
  }

  @Override
  public synchronized void copySucceeded(TaskAttemptID mapId, MapHost host, long bytes,
      long startMillis, long endMillis, MapOutput<K, V> output) throws IOException {
    long maps0 = shuffledMaps.getValue();
    long bytes0 = shuffleBytes.getValue();
    super.copySucceeded(mapId, host, bytes, startMillis, endMillis, output);
    long maps = shuffledMaps.getValue() - maps0;
    long added = shuffleBytes.getValue() - bytes0;
    if (maps == 0) {
      return;
    }
    if (direct) {
      directMaps += maps;
      directBytes += added;
      reporter.incrCounter(SharedMapOutputs.COUNTER_GROUP, SharedMapOutputs.DIRECT_MAPS, maps);
      reporter.incrCounter(SharedMapOutputs.COUNTER_GROUP, SharedMapOutputs.DIRECT_BYTES, added);
    } else {
      httpMaps += maps;
      httpBytes += added;
      reporter.incrCounter(SharedMapOutputs.COUNTER_GROUP, SharedMapOutputs.HTTP_MAPS, maps);
      reporter.incrCounter(SharedMapOutputs.COUNTER_GROUP, SharedMapOutputs.HTTP_BYTES, added);
    }
  }

  /**
   * {@link #copySucceeded} for a map output read straight from the filesystem.
   *
   * @throws IOException as {@link #copySucceeded} (committing the output failed)
   */
  synchronized void copySucceededDirect(TaskAttemptID mapId, MapHost host, long bytes,
      long startMillis, long endMillis, MapOutput<K, V> output) throws IOException {
    direct = true;
    try {
      copySucceeded(mapId, host, bytes, startMillis, endMillis, output);
    } finally {
      direct = false;
    }
  }

  /** @return one line: maps and bytes read directly and over HTTP so far */
  synchronized String summary() {
    return directMaps + " map outputs (" + directBytes + " bytes) read directly, " + httpMaps
        + " (" + httpBytes + " bytes) fetched over HTTP";
  }
}
