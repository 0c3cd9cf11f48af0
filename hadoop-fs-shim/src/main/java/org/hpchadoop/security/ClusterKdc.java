package org.hpchadoop.security;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.kerby.KOptions;
import org.apache.kerby.kerberos.kerb.client.KrbClient;
import org.apache.kerby.kerberos.kerb.client.KrbOption;

/**
 * The per-cluster Kerberos realm of {@code security: per-cluster}: a KDC (Hadoop's MiniKdc, i.e. Apache Kerby's
 * SimpleKdcServer) started on the master node before the daemons, living until the launcher stops it.
 *
 * <p>Usage: {@code ClusterKdc [--lifetime SECONDS] [--user NAME]... <dir> <realm> <bind address> <owner> <host>...}.
 * Each {@code --user} is one more user principal, with its own {@code <name>.keytab} and {@code <name>.ccache} (the
 * other users of a realm; the launcher names none: the tests stand up a centre's realm this way). In {@code dir}
 * (made mode 0700) it writes {@code krb5.conf}, {@code services.keytab} (the principals {@code rm/<host>},
 * {@code nm/<host>}, {@code jhs/<host>} and {@code HTTP/<host>} of every host) and {@code <owner>.keytab} (the
 * owner's principal), every file mode 0600 (MiniKdc writes its files 0644), and keeps the KDC's database in
 * {@code dir/kdc}. When the KDC answers, it prints one JSON line on stdout:
 * {@code {"realm": ..., "port": ..., "krb5_conf": ..., "services_keytab": ..., "owner_keytab": ..., "ccache": ...}}
 * ({@code ccache}: the owner's ticket cache, {@code <owner>.ccache}, got with the owner's keytab); then it
 * serves until its standard input closes or it gets SIGTERM/SIGINT, and stops the KDC.
 *
 * <p>Tickets live {@code --lifetime} seconds (default {@link #DEFAULT_LIFETIME}, 24 h): the KDC's maximum
 * ({@code max.ticket.lifetime}, which MiniKdc passes to Kerby's {@code KdcConfigKey.MAXIMUM_TICKET_LIFETIME}, read in
 * SECONDS by Kerby's {@code TicketIssuer}; MiniKdc's own default, "86400000", meant as milliseconds, is 1000 days
 * there), the owner's ticket cache (Kerby's client asks for 24 h, {@code KrbConfigKey.TICKET_LIFETIME}, unless told)
 * and {@code ticket_lifetime} in {@code krb5.conf} (Java's and MIT's clients: the daemons' keytab logins).
 */
public final class ClusterKdc {
  /** The services that get a principal on every host (Hadoop's _HOST principals). */
  static final String[] SERVICES = {"rm", "nm", "jhs", "HTTP"};
  /** Seconds a ticket lives without {@code --lifetime}: 24 h, Kerby's client default and MIT's {@code max_life}. */
  static final long DEFAULT_LIFETIME = 24 * 3600L;

  private ClusterKdc() {
  }

  /** The principals (without realm) of {@link #SERVICES} on each of {@code hosts}, in order, no duplicates. */
  static List<String> servicePrincipals(List<String> hosts) {
    Set<String> out = new LinkedHashSet<>();
    for (String host : hosts) {
      for (String service : SERVICES) {
        out.add(service + "/" + host.toLowerCase(Locale.ROOT));
      }
    }
    return new ArrayList<>(out);
  }

  /** Make {@code path} readable by its owner only: 0700 for a directory, 0600 for a file, recursively. */
  static void makePrivate(Path path) throws IOException {
    boolean dir = Files.isDirectory(path);
    Set<PosixFilePermission> mode = PosixFilePermissions.fromString(dir ? "rwx------" : "rw-------");
    Files.setPosixFilePermissions(path, mode);
    if (dir) {
      try (var children = Files.list(path)) {
        for (Path child : (Iterable<Path>) children::iterator) {
          makePrivate(child);
        }
      }
    }
  }

  private static String json(String value) {
    return "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  /**
   * The realm's {@code krb5.conf}: the KDC at {@code host:port} over TCP only, no DNS lookups of realms or KDCs
   * (MiniKdc's own names {@code localhost}, which other nodes cannot reach).
   */
  static String krb5Conf(String realm, String host, int port, long lifetime) {
    return "# The per-cluster realm of hpc-hadoop (security: per-cluster); it dies with the cluster.\n"
        + "[libdefaults]\n"
        + "    default_realm = " + realm + "\n"
        + "    ticket_lifetime = " + lifetime + "\n"
        + "    udp_preference_limit = 1\n"
        + "    dns_lookup_realm = false\n"
        + "    dns_lookup_kdc = false\n"
        + "    forwardable = true\n"
        + "\n[realms]\n"
        + "    " + realm + " = {\n"
        + "        kdc = " + host + ":" + port + "\n"
        + "    }\n";
  }

  public static void main(String[] args) throws Exception {
    try {
      serve(args);
    } catch (Exception e) {
      e.printStackTrace();
      System.exit(1);
    }
  }

  private static void serve(String[] given) throws Exception {
    String[] args = given;
    List<String> users = new ArrayList<>();
    long lifetime = DEFAULT_LIFETIME;
    while (args.length >= 2 && (args[0].equals("--lifetime") || args[0].equals("--user"))) {
      if (args[0].equals("--lifetime")) {
        lifetime = Long.parseLong(args[1]);
      } else {
        users.add(args[1]);
      }
      args = java.util.Arrays.copyOfRange(args, 2, args.length);
    }
    if (args.length < 5 || lifetime <= 0 || lifetime > Integer.MAX_VALUE) {
      System.err.println("usage: ClusterKdc [--lifetime SECONDS] [--user NAME]... <dir> <realm> <bind address> "
          + "<owner> <host>...");
      System.exit(2);
    }
    Path dir = Path.of(args[0]).toAbsolutePath();
    String realm = args[1].toUpperCase(Locale.ROOT);
    String bind = args[2];
    String owner = args[3];
    List<String> hosts = List.of(args).subList(4, args.length);
    Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    makePrivate(dir);
    Path work = dir.resolve("kdc");
    Files.createDirectories(work);

    int dot = realm.indexOf('.');
    Properties conf = MiniKdc.createConf();
    conf.setProperty(MiniKdc.ORG_NAME, dot < 0 ? realm : realm.substring(0, dot));
    conf.setProperty(MiniKdc.ORG_DOMAIN, dot < 0 ? "" : realm.substring(dot + 1));
    conf.setProperty(MiniKdc.KDC_BIND_ADDRESS, bind);
    conf.setProperty(MiniKdc.KDC_PORT, "0");
    conf.setProperty(MiniKdc.MAX_TICKET_LIFETIME, Long.toString(lifetime));  // seconds, as Kerby reads it
    MiniKdc kdc = new MiniKdc(conf, work.toFile());
    kdc.start();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      kdc.stop();
      stopped.countDown();
    }, "ClusterKdc-stop"));

    File services = dir.resolve("services.keytab").toFile();
    kdc.createPrincipal(services, servicePrincipals(hosts).toArray(new String[0]));
    File ownerKeytab = dir.resolve(owner + ".keytab").toFile();
    kdc.createPrincipal(ownerKeytab, owner);
    for (String user : users) {
      kdc.createPrincipal(dir.resolve(user + ".keytab").toFile(), user);
    }
    Path krb5 = dir.resolve("krb5.conf");
    Files.writeString(krb5, krb5Conf(kdc.getRealm(), bind, kdc.getPort(), lifetime), StandardCharsets.UTF_8);
    // The owner's ticket cache (KRB5CCNAME of the clients): the owner's tools need no kinit. Each --user's too.
    KrbClient client = new KrbClient();
    client.setKdcRealm(kdc.getRealm());
    client.setKdcHost(bind);
    client.setKdcTcpPort(kdc.getPort());
    client.setAllowUdp(false);
    client.init();
    File ccache = dir.resolve(owner + ".ccache").toFile();
    List<String> holders = new ArrayList<>(List.of(owner));
    holders.addAll(users);
    for (String holder : holders) {
      KOptions request = new KOptions();
      request.add(KrbOption.CLIENT_PRINCIPAL, holder + "@" + kdc.getRealm());
      request.add(KrbOption.USE_KEYTAB, true);
      request.add(KrbOption.KEYTAB_FILE, dir.resolve(holder + ".keytab").toFile());
      request.add(KrbOption.LIFE_TIME, (int) lifetime);  // seconds; without it Kerby's client asks for 24 h
      client.storeTicket(client.requestTgt(request), dir.resolve(holder + ".ccache").toFile());
    }
    makePrivate(dir);

    System.out.println("{\"realm\": " + json(kdc.getRealm()) + ", \"port\": " + kdc.getPort()
        + ", \"krb5_conf\": " + json(krb5.toString()) + ", \"services_keytab\": " + json(services.toString())
        + ", \"owner_keytab\": " + json(ownerKeytab.toString()) + ", \"ccache\": " + json(ccache.toString())
        + "}");
    System.out.flush();

    // Serve until stdin closes (the launcher ends) or a signal runs the shutdown hook.
    InputStream in = System.in;
    byte[] buffer = new byte[256];
    while (in.read(buffer) >= 0) {
      // ignore input
    }
    System.exit(0);
  }
}
