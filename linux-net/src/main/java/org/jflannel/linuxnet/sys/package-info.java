/**
 * The host's settings and service manager: {@link org.jflannel.linuxnet.sys.Sysctl} reads and writes
 * kernel parameters under /proc/sys (as the calling thread's network namespace sees them), and
 * {@link org.jflannel.linuxnet.sys.SdNotify} tells systemd the daemon is ready (sd_notify(3)).
 */
package org.jflannel.linuxnet.sys;
