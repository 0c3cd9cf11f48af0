import java.util.Map;

import javax.security.auth.Subject;
import javax.security.auth.kerberos.KerberosTicket;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;
import javax.security.auth.login.LoginContext;

/**
 * A keytab login as Hadoop's daemons make it (JAAS's Krb5LoginModule with a keytab and a principal, as
 * UserGroupInformation.loginUserFromKeytab does), for tests/unit/security/test_kdc.py: prints the end time of the
 * ticket-granting ticket it got, in epoch seconds. Run as a single-file source program:
 * {@code java -Djava.security.krb5.conf=KRB5_CONF KeytabLogin.java KEYTAB PRINCIPAL}.
 */
public final class KeytabLogin {
  private KeytabLogin() {
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> options = Map.of("useKeyTab", "true", "keyTab", args[0], "principal", args[1],
        "storeKey", "true", "doNotPrompt", "true", "useTicketCache", "false", "refreshKrb5Config", "true");
    Configuration conf = new Configuration() {
      @Override
      public AppConfigurationEntry[] getAppConfigurationEntry(String name) {
        return new AppConfigurationEntry[] {new AppConfigurationEntry("com.sun.security.auth.module.Krb5LoginModule",
            AppConfigurationEntry.LoginModuleControlFlag.REQUIRED, options)};
      }
    };
    LoginContext login = new LoginContext("daemon", new Subject(), null, conf);
    login.login();
    for (KerberosTicket ticket : login.getSubject().getPrivateCredentials(KerberosTicket.class)) {
      System.out.println(ticket.getServer().getName() + " " + ticket.getEndTime().getTime() / 1000);
    }
  }
}
