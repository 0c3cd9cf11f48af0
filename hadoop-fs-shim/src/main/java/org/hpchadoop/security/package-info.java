/** The per-cluster Kerberos realm (security: per-cluster): {@link org.hpchadoop.security.ClusterKdc}. */
package org.hpchadoop.security;
