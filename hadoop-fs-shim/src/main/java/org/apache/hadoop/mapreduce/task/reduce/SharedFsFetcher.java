package org.apache.hadoop.mapreduce.task.reduce;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.crypto.SecretKey;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.IndexRecord;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.MapOutputFile;
import org.apache.hadoop.mapred.Reporter;
import org.apache.hadoop.mapred.SpillRecord;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.util.Time;
import org.hpchadoop.shuffle.SharedMapOutputs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shuffle fetcher that reads each map's partition for this reducer straight from the map's
 * {@code file.out} on the shared filesystem (its offset and lengths from {@code file.out.index}),
 * into the merge manager's in-memory or on-disk output; a map whose files it cannot find or read
 * goes to Hadoop's HTTP fetch ({@link Fetcher#copyFromHost}), per map, and the task log says why.
 *
 * <p>Hpc-hadoop's class, in Hadoop's package only because {@link SharedFsShuffle} must be.
 */
class SharedFsFetcher<K, V> extends Fetcher<K, V> {
  private static final Logger LOG = LoggerFactory.getLogger(SharedFsFetcher.class);
  /** The host of every output in local mode (LocalJobRunner: every map ran in this JVM). */
  private static final MapHost LOCAL = new MapHost("local", "local");

  private final JobConf job;
  private final CountingShuffleScheduler<K, V> counting;
  private final SharedMapOutputs outputs;
  private final Map<TaskAttemptID, MapOutputFile> localMapFiles;
  private final String user;
  /** Read buffer of a direct copy, bytes: {@code io.file.buffer.size} (Hadoop default 4096). */
  private final int bufferSize;

  /** What became of one map's output. */
  private enum Outcome { COPIED, WAIT, FALLBACK }

  @SuppressWarnings("checkstyle:ParameterNumber")
  SharedFsFetcher(JobConf job, TaskAttemptID reduceId, CountingShuffleScheduler<K, V> scheduler,
      MergeManager<K, V> merger, Reporter reporter, ShuffleClientMetrics metrics,
      ExceptionReporter exceptionReporter, SecretKey shuffleKey, SharedMapOutputs outputs,
      Map<TaskAttemptID, MapOutputFile> localMapFiles) throws IOException {
    super(job, reduceId, scheduler, merger, reporter, metrics, exceptionReporter, shuffleKey);
    this.job = job;
    this.counting = scheduler;
    this.outputs = outputs;
    this.localMapFiles = localMapFiles;
    this.user = job.getUser();
    this.bufferSize = job.getInt("io.file.buffer.size", 4096);
    setName("sharedfs-fetcher#" + id);
    setDaemon(true);
  }

  /** Local mode: copy every map output of the LocalJobRunner, as Hadoop's LocalFetcher does. */
  @Override
  public void run() {
    if (localMapFiles == null) {
      super.run();
      return;
    }
    List<TaskAttemptID> pending = new ArrayList<>(localMapFiles.keySet());
    try {
      while (!pending.isEmpty()) {
        merger.waitForResource();
        metrics.threadBusy();
        try {
          while (!pending.isEmpty()) {
            TaskAttemptID map = pending.get(0);
            Path out = localMapFiles.get(map).getOutputFile();
            Outcome outcome = copyDirect(LOCAL, map, out, out.suffix(SharedMapOutputs.INDEX_SUFFIX));
            if (outcome == Outcome.WAIT) {
              break;
            }
            if (outcome == Outcome.FALLBACK) {
              throw new IOException("cannot read the output of " + map + " at " + out
                  + " (local mode has no HTTP fallback)");
            }
            pending.remove(0);
          }
        } finally {
          metrics.threadFree();
        }
      }
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
    } catch (Throwable t) {
      exceptionReporter.reportException(t);
    }
  }

  @Override
  protected void copyFromHost(MapHost host) throws IOException {
    List<TaskAttemptID> maps = scheduler.getMapsForHost(host);
    List<TaskAttemptID> viaHttp = new ArrayList<>();
    List<TaskAttemptID> later = new ArrayList<>();
    for (TaskAttemptID map : maps) {
      if (!later.isEmpty()) {
        later.add(map);
        continue;
      }
      SharedMapOutputs.Lookup where = outputs.locate(host.getHostName(), map, user);
      if (!where.found()) {
        LOG.warn("shared-fs shuffle: fetching {} from {} over HTTP: {}", map, host, where.missing());
        viaHttp.add(map);
        continue;
      }
      Outcome outcome = copyDirect(host, map, where.output(), where.index());
      if (outcome == Outcome.WAIT) {
        later.add(map);
      } else if (outcome == Outcome.FALLBACK) {
        viaHttp.add(map);
      }
    }
    if (!viaHttp.isEmpty()) {
      for (TaskAttemptID map : viaHttp) {
        scheduler.putBackKnownMapOutput(host, map);
      }
      super.copyFromHost(host);
    }
    for (TaskAttemptID map : later) {
      scheduler.putBackKnownMapOutput(host, map);
    }
  }

  /**
   * Reads this reducer's partition of one map output into the merge manager.
   *
   * @return {@code COPIED}; {@code WAIT} when the merge manager has no room now (nothing read);
   *     {@code FALLBACK} when the files cannot be read (logged; nothing kept)
   */
  private Outcome copyDirect(MapHost host, TaskAttemptID map, Path output, Path index)
      throws IOException {
    if (job.getBoolean(MRJobConfig.MR_ENCRYPTED_INTERMEDIATE_DATA, false)) {
      LOG.warn("shared-fs shuffle: fetching {} from {} over HTTP: intermediate data is encrypted",
          map, host);
      return Outcome.FALLBACK;
    }
    IndexRecord record;
    try {
      record = new SpillRecord(index, job).getIndex(reduce);
    } catch (IOException | RuntimeException e) {
      LOG.warn("shared-fs shuffle: fetching {} from {} over HTTP: reading {}: {}", map, host,
          index, e.toString());
      return Outcome.FALLBACK;
    }
    MapOutput<K, V> mapOutput = merger.reserve(map, record.rawLength, id);
    if (mapOutput == null) {
      LOG.info("sharedfs-fetcher#{}: the merge manager says wait", id);
      return Outcome.WAIT;
    }
    long start = Time.monotonicNow();
    try (FileChannel channel = FileChannel.open(Paths.get(output.toUri().getPath()),
        StandardOpenOption.READ)) {
      // Exactly this reducer's partition: a Hadoop FileSystem stream would read its whole buffer
      // (io.file.buffer.size, 1 MiB here) past the partition's end on each map output.
      channel.position(record.startOffset);
      InputStream in = new BufferedInputStream(
          new BoundedInputStream(Channels.newInputStream(channel), record.partLength),
          (int) Math.max(1, Math.min(bufferSize, record.partLength)));
      mapOutput.shuffle(host, in, record.partLength, record.rawLength, metrics, reporter);
    } catch (IOException | RuntimeException e) {
      mapOutput.abort();
      LOG.warn("shared-fs shuffle: fetching {} from {} over HTTP: reading {}: {}", map, host,
          output, e.toString());
      return Outcome.FALLBACK;
    }
    LOG.info("sharedfs-fetcher#{} read {} bytes of {} from {} to {}", id, record.partLength, map,
        output, mapOutput.getDescription());
    counting.copySucceededDirect(map, host, record.partLength, start, Time.monotonicNow(),
        mapOutput);
    return Outcome.COPIED;
  }

  /** At most {@code limit} bytes of a stream, so that a buffer above it never reads past them. */
  private static final class BoundedInputStream extends java.io.FilterInputStream {
    private long left;

    BoundedInputStream(InputStream in, long limit) {
      super(in);
      this.left = limit;
    }

    @Override
    public int read() throws IOException {
      if (left <= 0) {
        return -1;
      }
      int b = in.read();
      if (b >= 0) {
        left--;
      }
      return b;
    }

    @Override
    public int read(byte[] buf, int off, int len) throws IOException {
      if (left <= 0) {
        return -1;
      }
      int n = in.read(buf, off, (int) Math.min(len, left));
      if (n > 0) {
        left -= n;
      }
      return n;
    }

    @Override
    public long skip(long n) throws IOException {
      long skipped = in.skip(Math.min(n, left));
      left -= skipped;
      return skipped;
    }

    @Override
    public int available() throws IOException {
      return (int) Math.min(in.available(), left);
    }
  }
}
