/* SPDX-License-Identifier: Apache-2.0 */
/* Namespace plumbing: two named network namespaces (device, peer), each with one
 * persistent TUN device, created and removed with iproute2 (`ip`, found on PATH) so that
 * they are ordinary named namespaces anyone can enter with `ip netns exec`. Sysctls and
 * TUN attachment enter a namespace with setns(2) and come back. */
#define _GNU_SOURCE /* setns */
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "link.h"

#define TB_TUN_DEV "/dev/net/tun"
#define TB_NETNS_DIR "/run/netns/" /* where iproute2 keeps named namespaces */

/* Test addresses: only ever configured inside the two namespaces. */
static const char *const tb_end_names[2] = {"dev", "peer"};
static const char *const tb_end_addr4[2] = {"10.77.0.1/30", "10.77.0.2/30"};
static const char *const tb_end_addr6[2] = {"fd77::1/64", "fd77::2/64"};

int tb_link_privileged(char *err, size_t errlen) {
    if (geteuid() != 0) {
        snprintf(err, errlen, "not root: " TB_LINK_PRIV_MESSAGE);
        return 0;
    }
    int fd = open(TB_TUN_DEV, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open " TB_TUN_DEV " (%s): " TB_LINK_PRIV_MESSAGE,
                 strerror(errno));
        return 0;
    }
    close(fd);
    return 1;
}

int tb_link_name_ok(const char *name) {
    size_t n = strlen(name);
    if (n == 0 || n > TB_LINK_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_'))
            return 0;
    }
    return 1;
}

void tb_link_ns_name(char *out, size_t outlen, const char *name, uint32_t end) {
    snprintf(out, outlen, "tbl-%s-%s", name, tb_end_names[end & 1u]);
}

/* Runs `ip` with argv; quiet=1 hides its stderr (expected failures during teardown). */
static int tb_ip(const char *const argv[], int quiet) {
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (quiet) {
            int null = open("/dev/null", O_WRONLY);
            if (null >= 0)
                dup2(null, 2);
        }
        execvp("ip", (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int tb_ns_exists(const char *ns) {
    char path[128];
    struct stat st;
    snprintf(path, sizeof(path), TB_NETNS_DIR "%s", ns);
    return stat(path, &st) == 0;
}

/* Runs fn(arg) inside namespace `ns`, then returns to the namespace we came from. */
static int tb_in_ns(const char *ns, int (*fn)(void *), void *arg, char *err, size_t errlen) {
    char path[128];
    snprintf(path, sizeof(path), TB_NETNS_DIR "%s", ns);
    int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    int target = open(path, O_RDONLY | O_CLOEXEC);
    int rc = -1;
    if (home < 0 || target < 0) {
        snprintf(err, errlen, "namespace %s: %s (run `tlsbench-link up` first)", ns, strerror(errno));
    } else if (setns(target, CLONE_NEWNET) != 0) {
        snprintf(err, errlen, "setns %s: %s", ns, strerror(errno));
    } else {
        rc = fn(arg);
        int saved = errno;
        if (setns(home, CLONE_NEWNET) != 0) {
            /* Staying in the wrong namespace would misroute everything after: give up. */
            fprintf(stderr, "tlsbench-link: cannot return to the original namespace: %s\n",
                    strerror(errno));
            abort();
        }
        if (rc != 0)
            snprintf(err, errlen, "in namespace %s: %s", ns, strerror(saved));
    }
    if (home >= 0)
        close(home);
    if (target >= 0)
        close(target);
    return rc;
}

/* ---------------------------------------------------------------- sysctls */
typedef struct tb_sysctl_arg {
    char path[256];
    const char *value;
} tb_sysctl_arg;

static int tb_sysctl_write(void *p) {
    tb_sysctl_arg *a = p;
    int fd = open(a->path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = strlen(a->value);
    ssize_t w = write(fd, a->value, n);
    int saved = errno;
    close(fd);
    errno = saved;
    return w == (ssize_t)n ? 0 : -1;
}

/* Only net.* keys: they are the per-namespace ones (net.core.* partly excepted). */
int tb_link_sysctl(const char *ns, const char *kv, char *err, size_t errlen) {
    const char *eq = strchr(kv, '=');
    tb_sysctl_arg a;
    size_t klen = eq ? (size_t)(eq - kv) : 0;
    if (!eq || klen < 5 || strncmp(kv, "net.", 4) != 0 || klen + 11 >= sizeof(a.path) ||
        eq[1] == '\0') {
        snprintf(err, errlen, "--sysctl %s: expected net.<key>=<value>", kv);
        return -1;
    }
    memcpy(a.path, "/proc/sys/", 10);
    for (size_t i = 0; i < klen; i++) {
        char c = kv[i];
        if (c == '/' || (c == '.' && i + 1 < klen && kv[i + 1] == '.')) {
            snprintf(err, errlen, "--sysctl %s: bad key", kv);
            return -1;
        }
        a.path[10 + i] = c == '.' ? '/' : c;
    }
    a.path[10 + klen] = '\0';
    a.value = eq + 1;
    char why[256];
    if (tb_in_ns(ns, tb_sysctl_write, &a, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "--sysctl %s: %s", kv, why);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- up / down */
/* One step of `up`: an `ip` command line with placeholders NS, TUN, MTU, ADDR4, ADDR6;
 * `ipv6` says whether the step is for IPv6 (1), without it (0) or always (-1). */
typedef struct tb_up_step {
    int ipv6;
    const char *argv[12];
} tb_up_step;

static const tb_up_step tb_up_steps[] = {
    {-1, {"ip", "netns", "add", "NS"}},
    {-1, {"ip", "-n", "NS", "link", "set", "lo", "up"}},
    {-1, {"ip", "-n", "NS", "tuntap", "add", "dev", "TUN", "mode", "tun"}},
    {-1, {"ip", "-n", "NS", "link", "set", "dev", "TUN", "mtu", "MTU"}},
    {-1, {"ip", "-n", "NS", "addr", "add", "ADDR4", "dev", "TUN"}},
    {1, {"ip", "-n", "NS", "addr", "add", "ADDR6", "dev", "TUN", "nodad"}},
    {-1, {"ip", "-n", "NS", "link", "set", "dev", "TUN", "up"}},
    /* Everything leaving a namespace goes over the link; nothing can leave further: the
     * other namespace has no other interface and does not forward. */
    {-1, {"ip", "-n", "NS", "route", "add", "default", "dev", "TUN"}},
};

/* IPv6 off unless asked: router solicitations and MLD reports would otherwise add packets
 * to the link at timing-dependent moments and shift the arrival indices. */
static const char *const tb_no_ipv6[] = {"net.ipv6.conf.all.disable_ipv6=1",
                                         "net.ipv6.conf.default.disable_ipv6=1"};

static int tb_up_end(const tb_link_netns_opts *o, uint32_t end, char *err, size_t errlen) {
    char ns[64], mtu[16];
    tb_link_ns_name(ns, sizeof(ns), o->name, end);
    snprintf(mtu, sizeof(mtu), "%u", o->tun_mtu ? o->tun_mtu : 1500u);
    for (size_t s = 0; s < sizeof(tb_up_steps) / sizeof(tb_up_steps[0]); s++) {
        const tb_up_step *st = &tb_up_steps[s];
        if (st->ipv6 >= 0 && st->ipv6 != (o->ipv6 != 0))
            continue;
        const char *argv[12] = {0};
        for (size_t i = 0; st->argv[i]; i++) {
            static const struct {
                const char *placeholder;
                int which;
            } subst[] = {{"NS", 0}, {"TUN", 1}, {"MTU", 2}, {"ADDR4", 3}, {"ADDR6", 4}};
            const char *values[] = {ns, TB_LINK_TUN_NAME, mtu, tb_end_addr4[end], tb_end_addr6[end]};
            argv[i] = st->argv[i];
            for (size_t k = 0; k < sizeof(subst) / sizeof(subst[0]); k++)
                if (strcmp(st->argv[i], subst[k].placeholder) == 0)
                    argv[i] = values[subst[k].which];
        }
        if (tb_ip(argv, 0) != 0) {
            snprintf(err, errlen, "`ip %s %s %s ...` failed in %s", argv[1], argv[2], argv[3], ns);
            return -1;
        }
        if (s == 1 && !o->ipv6) /* right after the namespace exists, before the TUN */
            for (size_t k = 0; k < sizeof(tb_no_ipv6) / sizeof(tb_no_ipv6[0]); k++)
                if (tb_link_sysctl(ns, tb_no_ipv6[k], err, errlen) != 0)
                    return -1;
    }
    for (size_t k = 0; k < o->n_sysctls; k++)
        if (tb_link_sysctl(ns, o->sysctls[k], err, errlen) != 0)
            return -1;
    return 0;
}

int tb_link_up(const tb_link_netns_opts *o, char *err, size_t errlen) {
    if (!tb_link_privileged(err, errlen))
        return TB_LINK_EXIT_PRIV;
    /* Replaces a link of the same name: `up` after a crash needs no manual cleanup. */
    if (tb_link_down(o->name, err, errlen) != 0)
        return TB_LINK_EXIT_FAIL;
    for (uint32_t end = 0; end < 2; end++)
        if (tb_up_end(o, end, err, errlen) != 0) {
            char ignored[256];
            tb_link_down(o->name, ignored, sizeof(ignored));
            return TB_LINK_EXIT_FAIL;
        }
    return TB_LINK_EXIT_OK;
}

int tb_link_down(const char *name, char *err, size_t errlen) {
    for (uint32_t end = 0; end < 2; end++) {
        char ns[64];
        tb_link_ns_name(ns, sizeof(ns), name, end);
        if (!tb_ns_exists(ns))
            continue;
        /* Deleting the TUN first makes a running forwarder see its device vanish and exit
         * (its open descriptor would otherwise keep the namespace alive after `netns del`). */
        const char *del_tun[] = {"ip", "-n", ns, "link", "del", "dev", TB_LINK_TUN_NAME, NULL};
        const char *del_ns[] = {"ip", "netns", "del", ns, NULL};
        tb_ip(del_tun, 1);
        if (tb_ip(del_ns, 0) != 0 && tb_ns_exists(ns)) {
            snprintf(err, errlen, "cannot delete namespace %s", ns);
            return -1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- attach */
typedef struct tb_attach_arg {
    int fd;
    uint32_t mtu;
} tb_attach_arg;

/* A TUN file belongs to the namespace it was opened in: open and attach from inside. */
static int tb_attach_here(void *p) {
    tb_attach_arg *a = p;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    snprintf(ifr.ifr_name, IFNAMSIZ, "%s", TB_LINK_TUN_NAME);
    a->fd = open(TB_TUN_DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (a->fd < 0)
        return -1;
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (ioctl(a->fd, TUNSETIFF, &ifr) != 0 || s < 0 || ioctl(s, SIOCGIFMTU, &ifr) != 0) {
        int saved = errno;
        close(a->fd);
        if (s >= 0)
            close(s);
        errno = saved;
        return -1;
    }
    close(s);
    a->mtu = (uint32_t)ifr.ifr_mtu;
    return 0;
}

int tb_link_attach(const char *ns, uint32_t *mtu, char *err, size_t errlen) {
    tb_attach_arg a = {.fd = -1};
    if (tb_in_ns(ns, tb_attach_here, &a, err, errlen) != 0)
        return -1;
    *mtu = a.mtu;
    return a.fd;
}
