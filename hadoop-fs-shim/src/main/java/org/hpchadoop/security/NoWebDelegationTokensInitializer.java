package org.hpchadoop.security;

import java.util.Collections;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.http.FilterContainer;
import org.apache.hadoop.http.FilterInitializer;

/**
 * Puts {@link NoWebDelegationTokens} in front of every page and REST call of a web server (a global filter), when
 * named in {@code hadoop.http.filter.initializers} (core-site, under {@code security: per-cluster} and {@code site}).
 */
public class NoWebDelegationTokensInitializer extends FilterInitializer {

  /** The filter's name in the web server. */
  static final String NAME = "hpc-hadoop-no-web-delegation-tokens";

  @Override
  public void initFilter(FilterContainer container, Configuration conf) {
    container.addGlobalFilter(NAME, NoWebDelegationTokens.class.getName(), Collections.<String, String>emptyMap());
  }
}
