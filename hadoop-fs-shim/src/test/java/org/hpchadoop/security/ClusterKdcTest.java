package org.hpchadoop.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The pure parts of ClusterKdc (the KDC itself runs in tests/unit/lifecycle/test_kdc.py). */
class ClusterKdcTest {
  @TempDir
  Path dir;

  @Test
  void everyServiceGetsAPrincipalOnEveryHostOnce() {
    assertEquals(List.of("rm/vm", "nm/vm", "jhs/vm", "HTTP/vm", "rm/localhost", "nm/localhost", "jhs/localhost",
        "HTTP/localhost"), ClusterKdc.servicePrincipals(List.of("vm", "localhost", "VM")));
  }

  @Test
  void theRealmsKrb5ConfNamesTheKdcOnTheMasterOverTcp() {
    String conf = ClusterKdc.krb5Conf("C-1.HPC-HADOOP", "10.0.0.1", 4321, 7200);
    assertTrue(conf.contains("default_realm = C-1.HPC-HADOOP\n"), conf);
    assertTrue(conf.contains("C-1.HPC-HADOOP = {\n        kdc = 10.0.0.1:4321\n"), conf);
    assertTrue(conf.contains("udp_preference_limit = 1\n"), conf);
    assertTrue(conf.contains("ticket_lifetime = 7200\n"), conf);
  }

  @Test
  void makePrivateLeavesOnlyTheOwnerAnyAccess() throws IOException {
    Path sub = Files.createDirectories(dir.resolve("krb/kdc"));
    Path keytab = Files.writeString(dir.resolve("krb/a.keytab"), "k");
    Files.setPosixFilePermissions(keytab, PosixFilePermissions.fromString("rw-r--r--"));
    ClusterKdc.makePrivate(dir.resolve("krb"));
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(keytab)));
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(sub)));
  }
}
