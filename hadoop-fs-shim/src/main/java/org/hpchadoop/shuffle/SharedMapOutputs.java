package org.hpchadoop.shuffle;

import java.io.File;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptID;

/**
 * Where a finished map's output lies on the shared filesystem, for the shared-filesystem shuffle
 * ({@code org.apache.hadoop.mapreduce.task.reduce.SharedFsShuffle}).
 *
 * <p>A NodeManager keeps a map's output in its local dir at
 * {@code <local dir>/usercache/<user>/appcache/<application id>/output/<map attempt id>/file.out}
 * and {@code file.out.index} (the layout Hadoop 3.4.2's {@code YarnOutputFiles} writes and its
 * {@code ShuffleHandler} reads). The NodeManager's local dir of each host comes from
 * {@link #LOCAL_DIRS}, which hpc-hadoop renders from its cluster plan; nothing here guesses a path.
 */
public final class SharedMapOutputs {
  /**
   * Comma-separated {@code host=dir} entries: for each host name or address a map-completion event
   * may name (the NodeManager's {@code yarn.nodemanager.hostname}), that NodeManager's local dir as
   * every node sees it. A host not listed has its map outputs fetched over HTTP.
   */
  public static final String LOCAL_DIRS = "hpchadoop.shuffle.shared.local-dirs";

  /** Counter group of the shuffle counters (per reduce task, summed for the job). */
  public static final String COUNTER_GROUP = "org.hpchadoop.shuffle";
  /** Counter: bytes of map output (IFile, as stored) the reducer read straight from the filesystem. */
  public static final String DIRECT_BYTES = "DIRECT_BYTES";
  /** Counter: bytes of map output fetched over HTTP from a ShuffleHandler. */
  public static final String HTTP_BYTES = "HTTP_BYTES";
  /** Counter: map outputs read straight from the filesystem. */
  public static final String DIRECT_MAPS = "DIRECT_MAPS";
  /** Counter: map outputs fetched over HTTP. */
  public static final String HTTP_MAPS = "HTTP_MAPS";

  /** Name of a map attempt's output file (Hadoop's {@code MapOutputFile.MAP_OUTPUT_FILENAME_STRING}). */
  public static final String OUTPUT_FILE = "file.out";
  /** Suffix of its index file (Hadoop's {@code MapOutputFile.MAP_OUTPUT_INDEX_SUFFIX_STRING}). */
  public static final String INDEX_SUFFIX = ".index";

  /**
   * Where one map's output was looked for.
   *
   * @param output {@code file.out} of the map attempt, or {@code null} when the host is not known
   * @param index {@code file.out.index}, or {@code null}
   * @param missing why the output cannot be read directly ({@code null}: both files exist)
   */
  public record Lookup(Path output, Path index, String missing) {
    /** @return whether both files exist and can be read directly */
    public boolean found() {
      return missing == null;
    }
  }

  private final Map<String, String> dirs;

  /**
   * @param dirs host name or address → that NodeManager's local dir (absolute path)
   */
  public SharedMapOutputs(Map<String, String> dirs) {
    this.dirs = Collections.unmodifiableMap(new LinkedHashMap<>(dirs));
  }

  /**
   * Reads {@link #LOCAL_DIRS} from a job's configuration.
   *
   * @param conf the job's configuration
   * @return the hosts and dirs configured (none when the property is unset)
   * @throws IllegalArgumentException when an entry is not {@code host=/absolute/dir}
   */
  public static SharedMapOutputs fromConf(Configuration conf) {
    Map<String, String> dirs = new LinkedHashMap<>();
    for (String entry : conf.getTrimmedStrings(LOCAL_DIRS)) {
      int eq = entry.indexOf('=');
      String host = eq > 0 ? entry.substring(0, eq).trim() : "";
      String dir = eq > 0 ? entry.substring(eq + 1).trim() : "";
      if (host.isEmpty() || !dir.startsWith("/")) {
        throw new IllegalArgumentException(LOCAL_DIRS + ": entry '" + entry
            + "' is not host=/absolute/dir");
      }
      dirs.put(host, dir);
    }
    return new SharedMapOutputs(dirs);
  }

  /** @return host → local dir, as configured */
  public Map<String, String> dirs() {
    return dirs;
  }

  /**
   * The YARN application id of a MapReduce job: {@code job_<cluster ts>_<n>} runs as
   * {@code application_<cluster ts>_<n>} (Hadoop's {@code TypeConverter.toYarn}).
   *
   * @param job the job id
   * @return the application id as a string
   */
  public static String applicationId(JobID job) {
    return "application_" + job.getJtIdentifier() + "_" + String.format("%04d", job.getId());
  }

  /**
   * The host part of what a completion event names ({@code host:port} of the ShuffleHandler).
   *
   * @param hostPort {@code host:port} or {@code host}
   * @return {@code host}
   */
  public static String hostOf(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    return colon > 0 && hostPort.indexOf(':') == colon ? hostPort.substring(0, colon) : hostPort;
  }

  /**
   * Looks for a map's output files.
   *
   * @param hostPort the map's host as its completion event names it ({@code host:port})
   * @param map the map attempt
   * @param user the job's user (the NodeManager's {@code usercache/<user>})
   * @return the files, and whether both exist (a file that is not there makes {@code missing} say
   *     which; a host not in {@link #LOCAL_DIRS} gives {@code null} paths)
   */
  public Lookup locate(String hostPort, TaskAttemptID map, String user) {
    String host = hostOf(hostPort);
    String dir = dirs.get(host);
    if (dir == null) {
      return new Lookup(null, null, "host " + host + " is not in " + LOCAL_DIRS);
    }
    String attemptDir = dir + "/usercache/" + user + "/appcache/"
        + applicationId(map.getJobID()) + "/output/" + map;
    Path output = new Path(attemptDir, OUTPUT_FILE);
    Path index = new Path(attemptDir, OUTPUT_FILE + INDEX_SUFFIX);
    for (Path p : new Path[] {index, output}) {
      if (!new File(p.toUri().getPath()).canRead()) {
        return new Lookup(output, index, p + " cannot be read");
      }
    }
    return new Lookup(output, index, null);
  }
}
