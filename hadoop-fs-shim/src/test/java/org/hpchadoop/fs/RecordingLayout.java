package org.hpchadoop.fs;

import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;

/**
 * Test layout selected with {@code pfs.layout=org.hpchadoop.fs.RecordingLayout}: reports the stripe
 * size {@code test.stripe.size} for every path and records lookups and applied directories in the
 * static fields (tests reset them).
 */
public class RecordingLayout implements StripeLayout {
  static final AtomicInteger LOOKUPS = new AtomicInteger();
  static final List<Path> APPLIED = new CopyOnWriteArrayList<>();
  static final List<StripeSettings> APPLIED_SETTINGS = new CopyOnWriteArrayList<>();

  private final long stripe;

  public RecordingLayout(Configuration conf) {
    this.stripe = conf.getLongBytes("test.stripe.size", 0);
  }

  static void reset() {
    LOOKUPS.set(0);
    APPLIED.clear();
    APPLIED_SETTINGS.clear();
  }

  @Override
  public OptionalLong stripeSize(Path path) {
    LOOKUPS.incrementAndGet();
    return stripe > 0 ? OptionalLong.of(stripe) : OptionalLong.empty();
  }

  @Override
  public void apply(Path dir, StripeSettings settings) {
    APPLIED.add(dir);
    APPLIED_SETTINGS.add(settings);
  }
}
