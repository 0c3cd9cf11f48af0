package org.apache.hadoop.mapreduce.task.reduce;

import java.io.IOException;
import java.util.Map;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.MapOutputFile;
import org.apache.hadoop.mapred.RawKeyValueIterator;
import org.apache.hadoop.mapred.Reporter;
import org.apache.hadoop.mapred.ShuffleConsumerPlugin;
import org.apache.hadoop.mapred.Task;
import org.apache.hadoop.mapred.TaskStatus;
import org.apache.hadoop.mapred.TaskUmbilicalProtocol;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.util.Progress;
import org.hpchadoop.shuffle.SharedMapOutputs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Shared-filesystem shuffle: a {@link ShuffleConsumerPlugin}
 * ({@code mapreduce.job.reduce.shuffle.consumer.plugin.class}) for NodeManager local dirs on a
 * filesystem every node mounts. It learns where each finished map ran from the map-completion
 * events the reducer receives, reads that map's partition straight from its {@code file.out} in
 * the mapping node's local dir ({@link SharedMapOutputs}: dirs from
 * {@code hpchadoop.shuffle.shared.local-dirs}), and merges the outputs with Hadoop's own
 * {@link MergeManagerImpl}. A map output it cannot read directly is fetched over HTTP from the
 * ShuffleHandler, as Hadoop's {@link Shuffle} does; the task log says so, and the counters of
 * group {@code org.hpchadoop.shuffle} count maps and bytes read each way.
 *
 * <p>Hpc-hadoop's class, placed in Hadoop's package {@code org.apache.hadoop.mapreduce.task.reduce}
 * because Hadoop 3.4.2's {@link EventFetcher} (the completion-event thread) is package-private;
 * {@link ShuffleSchedulerImpl}, {@link Fetcher} and {@link MergeManagerImpl} are public.
 *
 * <p>Under the LocalJobRunner ({@code mapreduce.framework.name=local}) it reads the map outputs
 * the runner hands over, from this JVM's own local dirs.
 */
public class SharedFsShuffle<K, V> implements ShuffleConsumerPlugin<K, V>, ExceptionReporter {
  private static final Logger LOG = LoggerFactory.getLogger(SharedFsShuffle.class);
  /** Progress report interval while waiting for the copies, ms (as Hadoop's Shuffle). */
  private static final int PROGRESS_MS = 2000;
  /** Completion events asked for per RPC: at most 10000, at least 100 (as Hadoop's Shuffle). */
  private static final int MAX_EVENTS = 10000;
  private static final int MIN_EVENTS = 100;
  /** Events all reducers together may have outstanding at the AM (as Hadoop's Shuffle). */
  private static final int MAX_OUTSTANDING_EVENTS = 3000000;

  private TaskAttemptID reduceId;
  private JobConf jobConf;
  private Reporter reporter;
  private TaskUmbilicalProtocol umbilical;
  private ShuffleClientMetrics metrics;
  private CountingShuffleScheduler<K, V> scheduler;
  private MergeManager<K, V> merger;
  private Progress copyPhase;
  private TaskStatus taskStatus;
  private Task reduceTask;
  private Map<TaskAttemptID, MapOutputFile> localMapFiles;
  private SharedMapOutputs outputs;
  private Throwable throwable;
  private String throwingThreadName;

  /** Created by the reduce task from {@code mapreduce.job.reduce.shuffle.consumer.plugin.class}. */
  public SharedFsShuffle() {
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public void init(ShuffleConsumerPlugin.Context context) {
    reduceId = context.getReduceId();
    jobConf = context.getJobConf();
    reporter = context.getReporter();
    umbilical = context.getUmbilical();
    metrics = ShuffleClientMetrics.create(reduceId, jobConf);
    copyPhase = context.getCopyPhase();
    taskStatus = context.getStatus();
    reduceTask = context.getReduceTask();
    localMapFiles = (Map) context.getLocalMapFiles();
    outputs = SharedMapOutputs.fromConf(jobConf);
    scheduler = new CountingShuffleScheduler<>(jobConf, taskStatus, reduceId, this, copyPhase,
        context.getShuffledMapsCounter(), context.getReduceShuffleBytes(),
        context.getFailedShuffleCounter(), reporter);
    merger = new MergeManagerImpl<K, V>(reduceId, jobConf, context.getLocalFS(),
        context.getLocalDirAllocator(), reporter, context.getCodec(), context.getCombinerClass(),
        context.getCombineCollector(), context.getSpilledRecordsCounter(),
        context.getReduceCombineInputCounter(), context.getMergedMapOutputsCounter(), this,
        context.getMergePhase(), context.getMapOutputFile());
    LOG.info("shared-fs shuffle: map output dirs {}", outputs.dirs());
  }

  @Override
  @SuppressWarnings("unchecked")
  public RawKeyValueIterator run() throws IOException, InterruptedException {
    int maxEvents = Math.min(MAX_EVENTS,
        Math.max(MIN_EVENTS, MAX_OUTSTANDING_EVENTS / jobConf.getNumReduceTasks()));
    EventFetcher<K, V> events = new EventFetcher<>(reduceId, umbilical, scheduler, this, maxEvents);
    events.start();
    int count = localMapFiles != null ? 1 : jobConf.getInt(MRJobConfig.SHUFFLE_PARALLEL_COPIES, 5);
    SharedFsFetcher<K, V>[] fetchers = new SharedFsFetcher[count];
    for (int i = 0; i < count; i++) {
      fetchers[i] = new SharedFsFetcher<>(jobConf, reduceId, scheduler, merger, reporter, metrics,
          this, reduceTask.getShuffleSecret(), outputs, localMapFiles);
      fetchers[i].start();
    }
    while (!scheduler.waitUntilDone(PROGRESS_MS)) {
      reporter.progress();
      throwIfFailed();
    }
    events.shutDown();
    for (SharedFsFetcher<K, V> fetcher : fetchers) {
      fetcher.shutDown();
    }
    scheduler.close();
    LOG.info("shared-fs shuffle: {}", scheduler.summary());
    copyPhase.complete();
    taskStatus.setPhase(TaskStatus.Phase.SORT);
    reduceTask.statusUpdate(umbilical);
    RawKeyValueIterator merged;
    try {
      merged = merger.close();
    } catch (Throwable e) {
      throw new Shuffle.ShuffleError("Error while doing final merge ", e);
    }
    throwIfFailed();
    return merged;
  }

  private synchronized void throwIfFailed() throws Shuffle.ShuffleError {
    if (throwable != null) {
      throw new Shuffle.ShuffleError("error in shuffle in " + throwingThreadName, throwable);
    }
  }

  @Override
  public void close() {
  }

  @Override
  public synchronized void reportException(Throwable t) {
    if (throwable == null) {
      throwable = t;
      throwingThreadName = Thread.currentThread().getName();
      synchronized (scheduler) {
        scheduler.notifyAll();
      }
    }
  }
}
