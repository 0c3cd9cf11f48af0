package org.hpchadoop.fs;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lustre striping through the {@code lfs} command ({@code pfs.lfs.command}, default {@code lfs}).
 *
 * <ul>
 *   <li>stripe size: {@code lfs getstripe -S PATH} ({@code -d -S} for a directory: its default
 *       layout, which new files inherit);</li>
 *   <li>stripe count: {@code lfs getstripe -c PATH} ({@code -d -c} for a directory);</li>
 *   <li>new directories: {@code lfs setstripe -c COUNT -S SIZE [-i INDEX] DIR}, each option only
 *       when configured.</li>
 * </ul>
 *
 * <p>Output parsed: a bare number ({@code 1048576}), or the first {@code stripe_size:} /
 * {@code lmm_stripe_size:} field of the verbose, directory-default or YAML formats (for a composite
 * PFL layout, the first component's). A size may carry a K/M/G suffix. A failing {@code lfs}
 * (not on Lustre, no stripe info) means "unknown".
 *
 * <p>Every {@code lfs} run is bounded by {@code pfs.lfs.timeout} (seconds, default 60): a command
 * still running then (a hung Lustre client, an unreachable MDS) is killed with its child
 * processes, and the call throws an {@link IOException} naming the command and the timeout. Its
 * output goes to a temporary file, not a pipe, so that nothing blocks on reading it.
 */
public final class LustreLayout implements StripeLayout {
  private static final Logger LOG = LoggerFactory.getLogger(LustreLayout.class);
  /** Default of {@code pfs.lfs.timeout}: 60 seconds. */
  public static final long DEFAULT_TIMEOUT_SECONDS = 60;

  private final String lfs;
  private final long timeoutSeconds;

  /**
   * With the default timeout of {@value #DEFAULT_TIMEOUT_SECONDS} seconds.
   *
   * @param lfsCommand path or name of the {@code lfs} executable
   */
  public LustreLayout(String lfsCommand) {
    this(lfsCommand, DEFAULT_TIMEOUT_SECONDS);
  }

  /**
   * @param lfsCommand path or name of the {@code lfs} executable
   * @param timeoutSeconds how long one {@code lfs} run may take, in seconds (&gt; 0)
   * @throws IllegalArgumentException when {@code timeoutSeconds} is not positive
   */
  public LustreLayout(String lfsCommand, long timeoutSeconds) {
    if (timeoutSeconds <= 0) {
      throw new IllegalArgumentException(
          PfsConfigKeys.LFS_TIMEOUT + " must be > 0 seconds: " + timeoutSeconds);
    }
    this.lfs = lfsCommand;
    this.timeoutSeconds = timeoutSeconds;
  }

  /** @return the time limit of one {@code lfs} run, in seconds */
  public long getTimeoutSeconds() {
    return timeoutSeconds;
  }

  /**
   * {@inheritDoc}
   *
   * @throws IOException when {@code lfs} does not finish within {@code pfs.lfs.timeout}
   */
  @Override
  public OptionalLong stripeSize(Path path) throws IOException {
    OptionalLong v = query(path, "-S", "stripe_size");
    return v.isPresent() && v.getAsLong() > 0 ? v : OptionalLong.empty();
  }

  /**
   * {@inheritDoc}
   *
   * @throws IOException when {@code lfs} does not finish within {@code pfs.lfs.timeout}
   */
  @Override
  public OptionalInt stripeCount(Path path) throws IOException {
    OptionalLong v = query(path, "-c", "stripe_count");
    return v.isPresent() ? OptionalInt.of((int) v.getAsLong()) : OptionalInt.empty();
  }

  /**
   * Runs {@code lfs setstripe}.
   *
   * @throws IOException when {@code lfs} fails, cannot be started or does not finish within
   *     {@code pfs.lfs.timeout}
   */
  @Override
  public void apply(Path dir, StripeSettings s) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(lfs, "setstripe"));
    if (s.count() != 0) {
      cmd.addAll(List.of("-c", Integer.toString(s.count())));
    }
    if (s.size() > 0) {
      cmd.addAll(List.of("-S", Long.toString(s.size())));
    }
    if (s.index() >= 0) {
      cmd.addAll(List.of("-i", Integer.toString(s.index())));
    }
    cmd.add(dir.toString());
    Result r = run(cmd);
    if (r.exit != 0) {
      throw new IOException(String.join(" ", cmd) + " failed (exit " + r.exit + "): "
          + r.output.strip());
    }
  }

  private OptionalLong query(Path path, String option, String key) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(lfs, "getstripe"));
    if (Files.isDirectory(path)) {
      cmd.add("-d");
    }
    cmd.add(option);
    cmd.add(path.toString());
    Result r = run(cmd);
    if (r.exit != 0) {
      LOG.debug("{} failed (exit {}): {}", cmd, r.exit, r.output.strip());
      return OptionalLong.empty();
    }
    return parse(r.output, key);
  }

  private static final Pattern SUFFIXED = Pattern.compile("(-?\\d+)([kKmMgG])?");

  /**
   * Parses {@code lfs getstripe} output.
   *
   * @param output the command's output
   * @param key {@code stripe_size} or {@code stripe_count}
   * @return the first value of {@code key} (also as {@code lmm_key}), else the first line that is
   *     a bare number; empty when there is neither
   */
  static OptionalLong parse(String output, String key) {
    Matcher m = Pattern.compile("\\b(?:lmm_)?" + key + ":\\s*(-?\\d+)([kKmMgG])?\\b")
        .matcher(output);
    if (m.find()) {
      return OptionalLong.of(scale(m.group(1), m.group(2)));
    }
    for (String line : output.split("\\R")) {
      Matcher n = SUFFIXED.matcher(line.strip());
      if (n.matches()) {
        return OptionalLong.of(scale(n.group(1), n.group(2)));
      }
    }
    return OptionalLong.empty();
  }

  private static long scale(String number, String suffix) {
    long v = Long.parseLong(number);
    if (suffix == null) {
      return v;
    }
    switch (Character.toUpperCase(suffix.charAt(0))) {
      case 'K':
        return v << 10;
      case 'M':
        return v << 20;
      default:
        return v << 30;
    }
  }

  private record Result(int exit, String output) {
  }

  /**
   * Runs {@code cmd} with stdin closed and stdout+stderr in a temporary file, for at most
   * {@link #timeoutSeconds}.
   *
   * @return exit code and output; exit 127 when the command cannot be started (no {@code lfs})
   * @throws IOException on timeout (the process and its children are killed) or interruption
   */
  private Result run(List<String> cmd) throws IOException {
    File out = File.createTempFile("hpc-hadoop-lfs", ".out");
    try {
      Process p;
      try {
        p = new ProcessBuilder(cmd).redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .redirectOutput(out).start();
      } catch (IOException e) {
        // no lfs on this node: behave as "unknown" for lookups, fail for setstripe
        return new Result(127, e.getMessage());
      }
      try {
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
          kill(p);
          String command = String.join(" ", cmd);
          LOG.warn("{} did not finish within {} s ({}); killed", command, timeoutSeconds,
              PfsConfigKeys.LFS_TIMEOUT);
          throw new IOException(command + " timed out after " + timeoutSeconds + " s ("
              + PfsConfigKeys.LFS_TIMEOUT + "); killed");
        }
      } catch (InterruptedException e) {
        kill(p);
        Thread.currentThread().interrupt();
        throw new IOException(String.join(" ", cmd) + " interrupted", e);
      }
      return new Result(p.exitValue(), Files.readString(out.toPath(), StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out.toPath());
    }
  }

  /** Kills {@code p} and its descendants (a wrapper script's children outlive it otherwise). */
  private static void kill(Process p) {
    p.descendants().forEach(ProcessHandle::destroyForcibly);
    p.destroyForcibly();
  }

  @Override
  public String toString() {
    return "lustre(" + lfs + ", timeout " + timeoutSeconds + " s)";
  }
}
