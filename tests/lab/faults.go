package main

// Fault injection: a server that drops connections, answers 5xx or malformed
// XML, is slow or stalls, or forgets a session mid-scan (command-line switches);
// and objects or properties the account may not read (the scenario's
// "faults.no_permission"). See "Fault switches" in docs/scenario-format.md.
//
// Every switch but -fault-latency takes a SPEC: "N", "N-M" or "N-" numbers
// requests from 1 in the order they arrive, and "OPERATION:N..." counts only
// the SOAP requests of that operation (RetrievePropertiesEx:1 is the first
// RetrievePropertiesEx). A request that matches several switches gets the first
// of: invalidate-session, drop, status, stall, malformed.

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

const sessionCookie = "vmware_soap_session"

// requestRange selects requests: all of them numbered from..to (to 0: no end),
// or only those of one SOAP operation when op is set.
type requestRange struct {
	op       string
	from, to int
}

func parseRange(text string) (requestRange, error) {
	r := requestRange{}
	spec := text
	if i := strings.LastIndex(spec, ":"); i >= 0 {
		r.op, spec = spec[:i], spec[i+1:]
		if r.op == "" {
			return r, fmt.Errorf("%q: the operation before ':' is empty", text)
		}
	}
	first, last, isRange := strings.Cut(spec, "-")
	from, err := strconv.Atoi(first)
	if err != nil || from < 1 {
		return r, fmt.Errorf("%q: expected N, N-M or N- (requests numbered from 1)", text)
	}
	r.from, r.to = from, from
	if isRange {
		r.to = 0
		if last != "" {
			to, err := strconv.Atoi(last)
			if err != nil || to < from {
				return r, fmt.Errorf("%q: expected N-M with M >= N", text)
			}
			r.to = to
		}
	}
	return r, nil
}

func (r requestRange) matches(op string, all, ofOp int) bool {
	n := all
	if r.op != "" {
		if r.op != op {
			return false
		}
		n = ofOp
	}
	return n >= r.from && (r.to == 0 || n <= r.to)
}

// rangeList is a repeatable flag of SPECs.
type rangeList []requestRange

func (l *rangeList) String() string { return fmt.Sprint(len(*l)) }

func (l *rangeList) Set(text string) error {
	r, err := parseRange(text)
	if err != nil {
		return err
	}
	*l = append(*l, r)
	return nil
}

func (l rangeList) matches(op string, all, ofOp int) bool {
	for _, r := range l {
		if r.matches(op, all, ofOp) {
			return true
		}
	}
	return false
}

// statusFault answers an HTTP status, as a proxy or an overloaded vCenter does.
type statusFault struct {
	code   int
	ranges requestRange
}

type statusList []statusFault

func (l *statusList) String() string { return fmt.Sprint(len(*l)) }

func (l *statusList) Set(text string) error {
	code, spec, ok := strings.Cut(text, "@")
	status, err := strconv.Atoi(code)
	if !ok || err != nil || status < 400 || status > 599 {
		return fmt.Errorf("%q: expected CODE@SPEC with an HTTP status from 400 to 599, such as 503@4-5", text)
	}
	r, err := parseRange(spec)
	if err != nil {
		return err
	}
	*l = append(*l, statusFault{status, r})
	return nil
}

type faultSwitches struct {
	latency    time.Duration
	drop       rangeList
	status     statusList
	malformed  rangeList
	stall      rangeList
	invalidate rangeList

	mu      sync.Mutex
	count   int
	byOp    map[string]int
	dead    map[string]bool // session cookies the server has forgotten
	closing chan struct{}
	once    sync.Once
}

func registerFaultFlags(fs *flag.FlagSet) *faultSwitches {
	f := &faultSwitches{byOp: map[string]int{}, dead: map[string]bool{}, closing: make(chan struct{})}
	fs.DurationVar(&f.latency, "fault-latency", 0, "wait this long before serving each request (20ms)")
	fs.Var(&f.drop, "fault-drop", "close the connection without an answer (SPEC)")
	fs.Var(&f.status, "fault-status", "answer an HTTP status with a plain-text body (CODE@SPEC)")
	fs.Var(&f.malformed, "fault-malformed", "answer 200 with the real answer cut in half (SPEC)")
	fs.Var(&f.stall, "fault-stall", "never answer until the client gives up (SPEC)")
	fs.Var(&f.invalidate, "fault-invalidate-session", "forget the caller's session and answer NotAuthenticated (SPEC)")
	return f
}

func (f *faultSwitches) active() bool {
	return f.latency > 0 || len(f.drop)+len(f.status)+len(f.malformed)+len(f.stall)+len(f.invalidate) > 0
}

// shutdown releases stalled requests so that the server can close.
func (f *faultSwitches) shutdown() { f.once.Do(func() { close(f.closing) }) }

func (f *faultSwitches) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(r.Body)
			_ = r.Body.Close()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		op, this := soapOperation(body)
		f.mu.Lock()
		f.count++
		all := f.count
		ofOp := 0
		if op != "" {
			f.byOp[op]++
			ofOp = f.byOp[op]
		}
		cookie := ""
		if c, err := r.Cookie(sessionCookie); err == nil {
			cookie = c.Value
		}
		forgotten := cookie != "" && f.dead[cookie]
		invalidate := !forgotten && cookie != "" && f.invalidate.matches(op, all, ofOp)
		if invalidate {
			f.dead[cookie] = true
		}
		f.mu.Unlock()

		if f.latency > 0 {
			select {
			case <-time.After(f.latency):
			case <-r.Context().Done():
				return
			case <-f.closing:
				return
			}
		}
		if forgotten && (op == "Login" || op == "RetrieveServiceContent") {
			// The server no longer knows the cookie: these work without a session.
			r.Header.Del("Cookie")
			forgotten = false
		}
		switch {
		case invalidate || forgotten:
			writeNotAuthenticated(w, this)
		case f.drop.matches(op, all, ofOp):
			dropConnection(w)
		case f.statusFor(op, all, ofOp) != 0:
			code := f.statusFor(op, all, ofOp)
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(code)
			fmt.Fprintf(w, "%d %s\n", code, http.StatusText(code))
		case f.stall.matches(op, all, ofOp):
			select {
			case <-r.Context().Done():
			case <-f.closing:
			}
			dropConnection(w)
		case f.malformed.matches(op, all, ofOp):
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(http.StatusOK)
			out := rec.Body.Bytes()
			_, _ = w.Write(out[:len(out)/2])
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func (f *faultSwitches) statusFor(op string, all, ofOp int) int {
	for _, s := range f.status {
		if s.ranges.matches(op, all, ofOp) {
			return s.code
		}
	}
	return 0
}

// soapOperation names the call in a SOAP request body and its _this.
func soapOperation(body []byte) (op string, this types.ManagedObjectReference) {
	dec := xml.NewDecoder(bytes.NewReader(body))
	inBody := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return op, this
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case !inBody && start.Name.Local == "Body":
			inBody = true
		case inBody && op == "":
			op = start.Name.Local
		case op != "" && start.Name.Local == "_this":
			var ref struct {
				Type  string `xml:"type,attr"`
				Value string `xml:",chardata"`
			}
			if dec.DecodeElement(&ref, &start) == nil {
				this = types.ManagedObjectReference{Type: ref.Type, Value: ref.Value}
			}
			return op, this
		}
	}
}

// writeNotAuthenticated answers as vCenter does for a session it no longer has.
func writeNotAuthenticated(w http.ResponseWriter, this types.ManagedObjectReference) {
	if this.Type == "" {
		this = types.ManagedObjectReference{Type: "SessionManager", Value: "SessionManager"}
	}
	var ref bytes.Buffer
	_ = xml.EscapeText(&ref, []byte(this.Value))
	var kind bytes.Buffer
	_ = xml.EscapeText(&kind, []byte(this.Type))
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/" `+
		`xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" `+
		`xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">`+
		`<soapenv:Body><soapenv:Fault><faultcode>ServerFaultCode</faultcode>`+
		`<faultstring>The session is not authenticated.</faultstring><detail>`+
		`<NotAuthenticatedFault xmlns="urn:vim25" xsi:type="NotAuthenticated">`+
		`<object type="%s">%s</object><privilegeId>System.View</privilegeId>`+
		`</NotAuthenticatedFault></detail></soapenv:Fault></soapenv:Body></soapenv:Envelope>`,
		kind.String(), ref.String())
}

// dropConnection closes the connection without a byte of answer.
func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// ---------------------------------------------------------------------------
// NoPermission from the scenario: "faults": {"no_permission": [...]}.

type ScenarioFaults struct {
	NoPermission []NoPermission `json:"no_permission"`
	// Entities the account may not see at all: left out of every answer of the
	// property collector, as vCenter leaves them out of a container view.
	Invisible []string `json:"invisible"`
}

type NoPermission struct {
	Object   string  `json:"object"`
	Property *string `json:"property"` // nil: every property but the name
}

// withheld maps an entity name, as served, to the paths it may not read ("" for all).
var withheld map[string][]string

// invisible holds the names, as served, of the entities the account cannot see.
var invisible map[string]bool

func setNoPermission(faults ScenarioFaults) {
	invisible = map[string]bool{}
	for _, name := range faults.Invisible {
		invisible[vcName(name)] = true
	}
	withheld = map[string][]string{}
	for _, np := range faults.NoPermission {
		path := ""
		if np.Property != nil {
			path = *np.Property
		}
		withheld[vcName(np.Object)] = append(withheld[vcName(np.Object)], path)
	}
}

// hide leaves out the objects the account may not see at all.
func hide(objects []types.ObjectContent) []types.ObjectContent {
	if len(invisible) == 0 {
		return objects
	}
	var kept []types.ObjectContent
	for _, oc := range objects {
		if entity, ok := simulator.Map.Get(oc.Obj).(mo.Entity); ok && invisible[entity.Entity().Name] {
			continue
		}
		kept = append(kept, oc)
	}
	return kept
}

// withhold moves the properties the account may not read from propSet to
// missingSet, as NoPermission, the way vCenter reports them.
func withhold(specs []types.PropertyFilterSpec, objects []types.ObjectContent) []types.ObjectContent {
	if len(withheld) == 0 {
		return objects
	}
	for i := range objects {
		oc := &objects[i]
		entity, ok := simulator.Map.Get(oc.Obj).(mo.Entity)
		if !ok {
			continue
		}
		paths, ok := withheld[entity.Entity().Name]
		if !ok {
			continue
		}
		denied := func(p string) bool {
			for _, w := range paths {
				if (w == "" && p != "name") || p == w || strings.HasPrefix(p, w+".") || strings.HasPrefix(w, p+".") {
					return true
				}
			}
			return false
		}
		seen := map[string]bool{}
		var kept []types.DynamicProperty
		for _, prop := range oc.PropSet {
			seen[prop.Name] = true
			if denied(prop.Name) {
				oc.MissingSet = append(oc.MissingSet, noPermission(oc.Obj, prop.Name))
			} else {
				kept = append(kept, prop)
			}
		}
		oc.PropSet = kept
		// A denied path comes back denied even when it has no value.
		for _, p := range requestedPaths(specs, oc.Obj.Type) {
			if !seen[p] && denied(p) && !missing(oc.MissingSet, p) {
				oc.MissingSet = append(oc.MissingSet, noPermission(oc.Obj, p))
			}
		}
	}
	return objects
}

func noPermission(obj types.ManagedObjectReference, path string) types.MissingProperty {
	return types.MissingProperty{
		Path: path,
		Fault: types.LocalizedMethodFault{
			Fault:            &types.NoPermission{Object: obj, PrivilegeId: "System.Read"},
			LocalizedMessage: "Permission to perform this operation was denied.",
		},
	}
}

func missing(set []types.MissingProperty, path string) bool {
	for _, m := range set {
		if m.Path == path {
			return true
		}
	}
	return false
}

func requestedPaths(specs []types.PropertyFilterSpec, kind string) []string {
	var out []string
	for _, spec := range specs {
		for _, ps := range spec.PropSet {
			if ps.Type == kind || isA(kind, ps.Type) {
				out = append(out, ps.PathSet...)
			}
		}
	}
	return out
}

// isA says whether a managed type is the other or derives from it, for the
// types the collector asks about.
func isA(kind, base string) bool {
	switch base {
	case "ManagedEntity":
		return true
	case "ComputeResource":
		return kind == "ClusterComputeResource"
	}
	return false
}
