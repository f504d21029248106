// Command gpuaudit-lab serves a GPU-aware vCenter, described by a scenario, over
// the vSphere SOAP API on loopback. It is the govmomi simulator (vcsim) filled
// with exactly the estate of the scenario; see docs/scenario-format.md.
//
//	gpuaudit-lab -scenario FILE.json [-listen 127.0.0.1:0] [-tls -cert-out FILE]
//	             [-cert-name NAME] [-user NAME -password SECRET] [-fault-... SPEC]
//
// FILE.json is the normalised scenario that tests/lab/scenario.py writes. When
// the server is ready the lab prints one line, "ready <URL>", to stdout and
// serves until SIGTERM or SIGINT. Any failure is one line, "error: <message>",
// on stderr and a non-zero exit.
package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

type options struct {
	scenario string
	listen   string
	tls      bool
	certOut  string
	user     string
	password string
	certName string
	instance string
	faults   *faultSwitches
}

func main() {
	log.SetPrefix("gpuaudit-lab: ")
	defer func() {
		// A bug must still end as one error line, not a goroutine dump.
		if r := recover(); r != nil {
			fail(fmt.Errorf("internal error: %v", r))
		}
	}()
	if err := run(os.Args[1:]); err != nil {
		fail(err)
	}
}

func fail(err error) {
	msg := strings.Join(strings.Fields(err.Error()), " ") // always one line
	fmt.Fprintf(os.Stderr, "error: %s\n", msg)
	os.Exit(1)
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("gpuaudit-lab", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported as one line by main
	fs.StringVar(&o.scenario, "scenario", "", "normalised scenario (JSON)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "address to serve on")
	fs.BoolVar(&o.tls, "tls", false, "serve https with a self-signed certificate")
	fs.StringVar(&o.certOut, "cert-out", "", "with -tls: write the certificate (PEM) here")
	fs.StringVar(&o.user, "user", "", "the only user name Login accepts")
	fs.StringVar(&o.password, "password", "", "the only password Login accepts")
	fs.StringVar(&o.certName, "cert-name", "", "with -tls: the only name the certificate holds")
	// Every simulator answers with one instance UUID; labs standing for different
	// vCenters at once (a fleet) need their own, as real vCenters have.
	fs.StringVar(&o.instance, "instance-uuid", "", "the vCenter's about.instanceUuid (default: the simulator's)")
	o.faults = registerFaultFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.scenario == "":
		return nil, errors.New("-scenario is required")
	case (o.user == "") != (o.password == ""):
		return nil, errors.New("-user and -password go together")
	case o.certOut != "" && !o.tls:
		return nil, errors.New("-cert-out needs -tls")
	case o.certName != "" && !o.tls:
		return nil, errors.New("-cert-name needs -tls")
	}
	return o, nil
}

func run(args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	// Fail on a taken port before spending time on a large estate.
	probe, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %v", o.listen, unwrapNetError(err))
	}
	probe.Close()

	s, err := loadScenario(o.scenario)
	if err != nil {
		return err
	}
	m, err := buildEstate(s, o.instance)
	if err != nil {
		return err
	}
	defer m.Remove()
	installPagingCollector()
	setNoPermission(s.Faults)

	listen := &url.URL{Host: o.listen}
	if o.user != "" {
		listen.User = url.UserPassword(o.user, o.password)
	}
	m.Service.Listen = listen
	if o.tls {
		cert, pemBytes, err := selfSignedCert(o.certName)
		if err != nil {
			return fmt.Errorf("creating the certificate: %v", err)
		}
		if o.certOut != "" {
			if err := writeFileAtomic(o.certOut, pemBytes); err != nil {
				return fmt.Errorf("writing the certificate: %v", err)
			}
		}
		m.Service.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	server, err := startServer(m)
	if err != nil {
		return err
	}
	defer server.Close()
	dropServerURLSetting()
	if o.faults.active() {
		// Set before "ready": no client knows the port yet.
		server.Config.Handler = o.faults.wrap(server.Config.Handler)
	}

	u := *server.URL
	u.User = nil
	fmt.Printf("ready %s\n", u.String())
	<-stop
	o.faults.shutdown()
	return nil
}

// startServer starts the simulator's HTTP server, which panics when it cannot
// listen (the port can be taken between the probe and now).
func startServer(m *simulator.Model) (server *simulator.Server, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot serve: %v", strings.TrimPrefix(fmt.Sprint(r), "httptest: "))
		}
	}()
	return m.Service.NewServer(), nil
}

// dropServerURLSetting removes "vcsim.server.url", which the simulator adds to
// content.setting: it carries the port, and the estate should not depend on it.
func dropServerURLSetting() {
	om := simulator.Map.OptionManager()
	var kept []types.BaseOptionValue
	for _, s := range om.Setting {
		if s.GetOptionValue().Key != "vcsim.server.url" {
			kept = append(kept, s)
		}
	}
	om.Setting = kept
}

// unwrapNetError keeps the reason ("address already in use") of a listen error.
func unwrapNetError(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		var sys *os.SyscallError
		if errors.As(op.Err, &sys) {
			return sys.Err
		}
		return op.Err
	}
	return err
}
