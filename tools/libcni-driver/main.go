// libcni-driver: a cnitool-like CLI over the real libcni, for the e2e tests (PluginOnBareHostIT).
//
// Why it exists: upstream's cnitool binary is no longer provided to the project, and Debian ships
// libcni (golang-github-appc-cni-dev 1.1.2, sources in /usr/share/gocode) but no cnitool. This is
// the few lines of cnitool around that libcni, built static by bin/libcni-driver (GOPATH mode, Debian's
// Go, CGO_ENABLED=0: imports only from the standard library and /usr/share/gocode), plus --root so it
// runs from outside a root that has no loader or libc and plus GC and STATUS, which libcni 1.1.2 lacks.
//
//	libcni-driver [--root DIR] [--valid ID/IFNAME]... OP NETWORK_NAME [NETNS_PATH]
//
// OP is add, check, del (NETNS_PATH required), gc or status (NETNS_PATH optional and ignored).
// Environment as cnitool's: NETCONFPATH (default /etc/cni/net.d), CNI_PATH (plugin directories,
// colon-separated), CNI_IFNAME (default eth0 when unset), CNI_ARGS ("K=V;K=V"), CAP_ARGS (a JSON object
// of capability arguments). The container ID is cnitool's, "cnitool-" and the first 10 bytes (20 hex
// digits) of the SHA-512 of the absolute netns path, unless CNI_CONTAINERID is set. The network is
// loaded by name with libcni.LoadConfList(NETCONFPATH, NETWORK_NAME) (a .conflist, else a .conf or
// .json upconverted). Every plugin inherits this process's environment, as under cnitool.
//
// What each op calls:
//
//	add     libcni CNIConfig.AddNetworkList; the result's JSON on stdout (result.Print(), as cnitool)
//	check   libcni CNIConfig.CheckNetworkList
//	del     libcni CNIConfig.DelNetworkList
//	gc      what libcni 1.2's GCNetworkList sends to the plugins, over libcni's own exec layer
//	        (pkg/invoke: invoke.FindInPath over CNI_PATH, invoke.ExecPluginWithoutResult with
//	        Command "GC"): each plugin of the list in order, its raw conf with the list's "name" and
//	        "cniVersion" injected (libcni.InjectConf) and, when --valid is given at least once,
//	        "cni.dev/valid-attachments": [{"containerID": ID, "ifname": IFNAME}, ...], one per --valid
//	        (--valid '' adds none, so an empty list goes: every attachment is stale; without any
//	        --valid the key is left out, as cnitool 1.2's gc, which passes no GCArgs). Every plugin
//	        runs even when one fails; the errors are reported together. As in 1.2, nothing runs when
//	        the list's cniVersion is below 1.1.0 or the list says "disableGC": true (a note on stderr,
//	        exit 0). Not done: 1.2's first step, a DEL for each attachment in libcni's cache
//	        (/var/lib/cni/results) of this network that is not among the valid ones.
//	status  what libcni 1.2's GetStatusNetworkList sends, the same way with Command "STATUS": each
//	        plugin in order, its raw conf with "name" and "cniVersion" injected; stops at the first
//	        failure. Nothing runs below cniVersion 1.1.0 (a note on stderr, exit 0).
//
// GC and STATUS run with CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME and CNI_ARGS empty and CNI_PATH set,
// as libcni 1.2 runs them.
//
// --root DIR: first thing, the driver chroots into DIR (syscall.Chroot, then Chdir("/")), so every
// path above (NETCONFPATH, CNI_PATH, NETNS_PATH, libcni's cache /var/lib/cni) and every plugin is DIR's.
// Being static, the driver needs nothing in DIR itself. Needs CAP_SYS_CHROOT (root).
//
// Errors go to stderr (a plugin's error as libcni reports it); the exit status is then 1, 2 on bad usage.
package main

import (
	"context"
	"crypto/sha512"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/version"
)

// attachment is libcni 1.2's types.GCAttachment, as it goes in cni.dev/valid-attachments.
type attachment struct {
	ContainerID string `json:"containerID"`
	IfName      string `json:"ifname"`
}

// validFlag collects --valid ID/IFNAME; set tells an empty list from none.
type validFlag struct {
	set  bool
	list []attachment
}

func (v *validFlag) String() string { return "" }

func (v *validFlag) Set(s string) error {
	v.set = true
	if s == "" {
		return nil
	}
	i := strings.LastIndex(s, "/")
	if i <= 0 || i == len(s)-1 {
		return fmt.Errorf("want CONTAINER_ID/IFNAME, got %q", s)
	}
	v.list = append(v.list, attachment{ContainerID: s[:i], IfName: s[i+1:]})
	return nil
}

func usage() {
	fmt.Fprintf(os.Stderr, "usage: libcni-driver [--root DIR] [--valid ID/IFNAME]... add|check|del NETWORK_NAME NETNS_PATH\n"+
		"       libcni-driver [--root DIR] [--valid ID/IFNAME]... gc|status NETWORK_NAME [NETNS_PATH]\n")
	os.Exit(2)
}

func main() {
	fs := flag.NewFlagSet("libcni-driver", flag.ContinueOnError)
	fs.Usage = usage
	root := fs.String("root", "", "chroot into DIR before anything else")
	var valid validFlag
	fs.Var(&valid, "valid", "CONTAINER_ID/IFNAME of a valid attachment, for gc (repeatable; '' for an empty list)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		usage()
	}
	if *root != "" {
		if err := syscall.Chroot(*root); err != nil {
			exit(fmt.Errorf("chroot %s: %w", *root, err))
		}
		if err := syscall.Chdir("/"); err != nil {
			exit(fmt.Errorf("chdir / in %s: %w", *root, err))
		}
	}
	args := fs.Args()
	if len(args) < 2 || len(args) > 3 {
		usage()
	}
	op, name := args[0], args[1]
	switch op {
	case "add", "check", "del":
		if len(args) != 3 {
			usage()
		}
	case "gc", "status":
	default:
		usage()
	}

	netdir := os.Getenv("NETCONFPATH")
	if netdir == "" {
		netdir = "/etc/cni/net.d"
	}
	list, err := libcni.LoadConfList(netdir, name)
	if err != nil {
		exit(err)
	}
	paths := filepath.SplitList(os.Getenv("CNI_PATH"))
	ctx := context.TODO()

	switch op {
	case "gc":
		exit(gc(ctx, list, paths, valid))
	case "status":
		exit(status(ctx, list, paths))
	}

	rt, err := runtimeConf(args[2])
	if err != nil {
		exit(err)
	}
	cninet := libcni.NewCNIConfig(paths, nil)
	switch op {
	case "add":
		result, err := cninet.AddNetworkList(ctx, list, rt)
		if result != nil {
			_ = result.Print()
		}
		exit(err)
	case "check":
		exit(cninet.CheckNetworkList(ctx, list, rt))
	case "del":
		exit(cninet.DelNetworkList(ctx, list, rt))
	}
}

// runtimeConf is cnitool's RuntimeConf: CAP_ARGS, CNI_ARGS, CNI_IFNAME and the netns path's hash.
func runtimeConf(netnsArg string) (*libcni.RuntimeConf, error) {
	var capabilityArgs map[string]interface{}
	if v := os.Getenv("CAP_ARGS"); v != "" {
		if err := json.Unmarshal([]byte(v), &capabilityArgs); err != nil {
			return nil, fmt.Errorf("CAP_ARGS: %w", err)
		}
	}
	var cniArgs [][2]string
	if v := os.Getenv("CNI_ARGS"); v != "" {
		for _, pair := range strings.Split(v, ";") {
			kv := strings.Split(pair, "=")
			if len(kv) != 2 || kv[0] == "" || kv[1] == "" {
				return nil, fmt.Errorf("invalid CNI_ARGS pair %q", pair)
			}
			cniArgs = append(cniArgs, [2]string{kv[0], kv[1]})
		}
	}
	ifName, ok := os.LookupEnv("CNI_IFNAME")
	if !ok {
		ifName = "eth0"
	}
	netns, err := filepath.Abs(netnsArg)
	if err != nil {
		return nil, err
	}
	containerID := os.Getenv("CNI_CONTAINERID")
	if containerID == "" {
		s := sha512.Sum512([]byte(netns))
		containerID = fmt.Sprintf("cnitool-%x", s[:10])
	}
	return &libcni.RuntimeConf{
		ContainerID:    containerID,
		NetNS:          netns,
		IfName:         ifName,
		Args:           cniArgs,
		CapabilityArgs: capabilityArgs,
	}, nil
}

// atLeast110 is libcni 1.2's gate for GC and STATUS.
func atLeast110(list *libcni.NetworkConfigList, op string) bool {
	if ok, _ := version.GreaterThanOrEqualTo(list.CNIVersion, "1.1.0"); !ok {
		fmt.Fprintf(os.Stderr, "libcni-driver: %s: network %q has cniVersion %q, below 1.1.0: nothing to run (as libcni 1.2)\n",
			op, list.Name, list.CNIVersion)
		return false
	}
	return true
}

// gc is libcni 1.2's GCNetworkList less its DEL of stale cached attachments.
func gc(ctx context.Context, list *libcni.NetworkConfigList, paths []string, valid validFlag) error {
	var raw struct {
		DisableGC bool `json:"disableGC"`
	}
	if err := json.Unmarshal(list.Bytes, &raw); err != nil {
		return fmt.Errorf("error parsing configuration list: %w", err)
	}
	if raw.DisableGC {
		fmt.Fprintf(os.Stderr, "libcni-driver: gc: network %q has disableGC: nothing to run\n", list.Name)
		return nil
	}
	if !atLeast110(list, "gc") {
		return nil
	}
	inject := map[string]interface{}{"name": list.Name, "cniVersion": list.CNIVersion}
	if valid.set {
		attachments := valid.list
		if attachments == nil {
			attachments = []attachment{}
		}
		inject["cni.dev/valid-attachments"] = attachments
	}
	var errs []string
	for _, plugin := range list.Plugins {
		conf, err := libcni.InjectConf(plugin, inject)
		if err != nil {
			errs = append(errs, fmt.Sprintf("failed to generate configuration to GC plugin %s: %v", plugin.Network.Type, err))
			continue
		}
		if err := run(ctx, "GC", conf, paths); err != nil {
			errs = append(errs, fmt.Sprintf("failed to GC plugin %s: %v", plugin.Network.Type, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// status is libcni 1.2's GetStatusNetworkList.
func status(ctx context.Context, list *libcni.NetworkConfigList, paths []string) error {
	if !atLeast110(list, "status") {
		return nil
	}
	inject := map[string]interface{}{"name": list.Name, "cniVersion": list.CNIVersion}
	for _, plugin := range list.Plugins {
		conf, err := libcni.InjectConf(plugin, inject)
		if err != nil {
			return fmt.Errorf("failed to generate configuration to get plugin STATUS %s: %w", plugin.Network.Type, err)
		}
		if err := run(ctx, "STATUS", conf, paths); err != nil {
			return err
		}
	}
	return nil
}

// run is libcni 1.2's gcNetwork / getStatusNetwork: the plugin found in CNI_PATH, run with no container.
func run(ctx context.Context, command string, conf *libcni.NetworkConfig, paths []string) error {
	pluginPath, err := invoke.FindInPath(conf.Network.Type, paths)
	if err != nil {
		return err
	}
	args := &invoke.Args{Command: command, Path: strings.Join(paths, string(os.PathListSeparator))}
	return invoke.ExecPluginWithoutResult(ctx, pluginPath, conf.Bytes, args, nil)
}

func exit(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}
