/**
 * Security of a cluster: the per-cluster Kerberos realm (security: per-cluster, {@link
 * org.hpchadoop.security.ClusterKdc}) and the web servers' refusal of delegation-token operations ({@link
 * org.hpchadoop.security.NoWebDelegationTokens}).
 */
package org.hpchadoop.security;
