package org.hpchadoop.fs;

import java.io.File;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.hadoop.conf.Configuration;

/**
 * The stripe layout of each role's directory (input, output, staging, scratch: hpc-hadoop's
 * {@code filesystem.striping.<role>}), from {@code pfs.stripe.roles} and, for each role named
 * there, {@code pfs.stripe.<role>.dir}, {@code .count}, {@code .size} and {@code .index}
 * ({@link PfsConfigKeys}). A directory takes the layout of the role whose directory contains it
 * (the innermost one when role directories nest); a directory outside every role's directory
 * takes none (it keeps what it inherits from its parent).
 *
 * @param roles each role's directory (absolute, normalized) and settings, innermost first
 */
public record RoleLayouts(List<Role> roles) {

  /** No role configured: no directory gets a layout. */
  public static final RoleLayouts NONE = new RoleLayouts(List.of());

  /**
   * One role.
   *
   * @param name the role's name ({@code input}, {@code output}...)
   * @param dir its directory, absolute and normalized
   * @param settings the layout of the directories created in it
   */
  public record Role(String name, Path dir, StripeSettings settings) {
  }

  /**
   * Reads the roles from a configuration.
   *
   * @param conf Hadoop configuration
   * @return the roles whose directory and settings are set ({@link #NONE} when none)
   * @throws IllegalArgumentException when a role named in {@code pfs.stripe.roles} has no
   *     absolute {@code pfs.stripe.<role>.dir}
   */
  public static RoleLayouts from(Configuration conf) {
    List<Role> roles = new ArrayList<>();
    for (String name : conf.getTrimmedStrings(PfsConfigKeys.STRIPE_ROLES)) {
      String dir = conf.getTrimmed(PfsConfigKeys.roleKey(name, "dir"), "");
      if (!dir.startsWith("/")) {
        throw new IllegalArgumentException(PfsConfigKeys.roleKey(name, "dir")
            + " must be an absolute directory: '" + dir + "'");
      }
      StripeSettings settings = StripeSettings.forRole(conf, name);
      if (!settings.isUnset()) {
        roles.add(new Role(name, Paths.get(dir).normalize(), settings));
      }
    }
    roles.sort(Comparator.comparingInt((Role r) -> r.dir().getNameCount()).reversed());
    return roles.isEmpty() ? NONE : new RoleLayouts(List.copyOf(roles));
  }

  /**
   * @param dir a local directory
   * @return the role whose directory is {@code dir} or contains it, the innermost one; null when
   *     no role's directory does
   */
  public Role roleOf(File dir) {
    Path p = dir.toPath().toAbsolutePath().normalize();
    for (Role r : roles) {
      if (p.startsWith(r.dir())) {
        return r;
      }
    }
    return null;
  }

  /** @return true when no role is configured */
  public boolean isEmpty() {
    return roles.isEmpty();
  }
}
