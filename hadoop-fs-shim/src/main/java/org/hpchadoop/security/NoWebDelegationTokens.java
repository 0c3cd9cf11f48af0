package org.hpchadoop.security;

import java.io.IOException;
import java.util.Locale;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.FilterConfig;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/**
 * Refuses the web servers' delegation-token operations (issue 36): the ResourceManager's REST
 * {@code /ws/v1/cluster/delegation-token} (POST: a new RM token, DELETE, {@code /expiration}) and the {@code
 * ?op=GETDELEGATIONTOKEN|RENEWDELEGATIONTOKEN|CANCELDELEGATIONTOKEN} operations of Hadoop's delegation-token
 * authentication filters, with HTTP 403 and whatever authentication the request carries.
 *
 * <p>Why: Hadoop's {@code RMWebServices.createKerberosUserGroupInformation} accepts any request whose authentication type
 * is {@code kerberos}, and a request let in by a signed {@code hadoop.auth} cookie has that type; an RM delegation
 * token works over RPC as the owner until it expires (hours), long after the cookie (seconds). Nothing of hpc-hadoop
 * asks for one over the web: its clients and Spark get theirs over Kerberos RPC. Installed on every web server by
 * {@link NoWebDelegationTokensInitializer} ({@code hadoop.http.filter.initializers}, under a Kerberos security mode).
 */
public class NoWebDelegationTokens implements Filter {

  /** The RM's REST delegation-token resource ({@code RMWSConsts.DELEGATION_TOKEN}). */
  static final String RESOURCE = "/delegation-token";

  /** What the refused request gets (the body of the 403). */
  static final String REFUSAL = "delegation tokens are not handed out over the web by this cluster (hpc-hadoop); "
      + "get one over Kerberos RPC";

  @Override
  public void init(FilterConfig config) {
  }

  /**
   * True if {@code request} asks for a delegation-token operation: its decoded path (servlet path and path info, as
   * the web server resolved it, repeated slashes collapsed, case ignored) ends with or passes through {@link
   * #RESOURCE}, or its {@code op} parameter names one.
   */
  static boolean refused(HttpServletRequest request) {
    String path = (nonNull(request.getServletPath()) + nonNull(request.getPathInfo()))
        .replaceAll("/+", "/").toLowerCase(Locale.ROOT);
    if (path.endsWith(RESOURCE) || path.contains(RESOURCE + "/")) {
      return true;
    }
    String op = request.getParameter("op");
    return op != null && op.toUpperCase(Locale.ROOT).endsWith("DELEGATIONTOKEN");
  }

  private static String nonNull(String text) {
    return text == null ? "" : text;
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (request instanceof HttpServletRequest && refused((HttpServletRequest) request)) {
      ((HttpServletResponse) response).sendError(HttpServletResponse.SC_FORBIDDEN, REFUSAL);
      return;
    }
    chain.doFilter(request, response);
  }

  @Override
  public void destroy() {
  }
}
