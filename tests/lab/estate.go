package main

// Building the served estate. The simulator starts as an empty vCenter (no
// datacenters, hosts, VMs, datastores or DVS) and the scenario adds exactly what
// it declares. Structure (datacenters, clusters, hosts) goes through the
// simulator's own SOAP methods; the details the simulator has no methods for
// (GPUs, storage paths, HA settings, VMs with passthrough devices) are written
// into its objects directly before the server starts.
//
// Managed object ids come from the simulator's counter, so the same scenario
// always yields the same ids; everything else that vCenter would randomise
// (UUIDs, WWNs, MACs, times) is derived from names.

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// epoch stands in for every timestamp the lab sets, so that responses repeat.
var epoch = time.Date(2024, 6, 1, 8, 0, 0, 0, time.UTC)

type estate struct {
	scenario *Scenario
	model    *simulator.Model
	ctx      context.Context
	client   *vim25.Client
	api      apiVersion
	esx      bool // a standalone ESXi host (esxi.go), not a vCenter

	hosts      map[string]*hostEntry
	datastores map[string]*simulator.Datastore
	vms        map[string]*simulator.VirtualMachine
	clusters   []*clusterEntry
}

type datacenterEntry struct {
	spec    *Datacenter
	obj     *simulator.Datacenter
	folders *object.DatacenterFolders
}

type clusterEntry struct {
	spec *Cluster
	dc   *datacenterEntry
	obj  *simulator.ClusterComputeResource
}

type hostEntry struct {
	spec    *Host
	obj     *simulator.HostSystem
	dc      *datacenterEntry
	cluster *clusterEntry // nil for a standalone host
	// The host's ComputeResource: the cluster, or the standalone host's own.
	computeResource *mo.ComputeResource
	pool            types.ManagedObjectReference
	// Powered-on VMs per GPU, for graphicsInfo.vm.
	gpuVMs map[string][]types.ManagedObjectReference
}

func (h *hostEntry) connected() bool { return h.spec.Connection == "connected" }

// buildEstate creates the simulator model and fills it with the scenario.
func buildEstate(s *Scenario, instanceUUID string) (*simulator.Model, error) {
	api, err := parseAPIVersion(s.VCenter.APIVersion)
	if err != nil {
		return nil, err
	}
	esx := s.VCenter.Kind == "esxi"
	var m *simulator.Model
	if esx {
		// ESXi's own inventory: ha-datacenter and its host, which the scenario's
		// one host becomes; no datastore or VM of the simulator's.
		m = simulator.ESX()
		m.Datastore, m.Machine = 0, 0
	} else {
		m = simulator.VPX()
		// No inventory of the simulator's own: the scenario declares all of it.
		m.Datacenter, m.Cluster, m.ClusterHost, m.Host = 0, 0, 0, 0
		m.Datastore, m.Machine, m.Portgroup, m.Pool = 0, 0, 0, 0
	}
	m.Autostart = false
	about := &m.ServiceContent.About
	about.Name = s.VCenter.Name
	about.FullName = fmt.Sprintf("%s %s build-%s", s.VCenter.Name, s.VCenter.Version, s.VCenter.Build)
	about.Version = s.VCenter.Version
	about.Build = s.VCenter.Build
	about.ApiVersion = s.VCenter.APIVersion
	about.LicenseProductVersion = majorMinor(s.VCenter.Version)
	if instanceUUID != "" {
		about.InstanceUuid = instanceUUID
	}
	if err := m.Create(); err != nil {
		return nil, fmt.Errorf("creating the simulator: %v", err)
	}
	ctx := context.Background()
	client, err := vim25.NewClient(ctx, m.Service)
	if err != nil {
		return nil, fmt.Errorf("connecting to the simulator: %v", err)
	}
	e := &estate{
		scenario:   s,
		model:      m,
		ctx:        ctx,
		client:     client,
		api:        api,
		esx:        esx,
		hosts:      map[string]*hostEntry{},
		datastores: map[string]*simulator.Datastore{},
		vms:        map[string]*simulator.VirtualMachine{},
	}
	if err := e.build(); err != nil {
		m.Remove()
		return nil, err
	}
	return m, nil
}

func (e *estate) build() error {
	var dcs []*datacenterEntry
	for i := range e.scenario.Datacenters {
		spec := &e.scenario.Datacenters[i]
		add := e.addDatacenter
		if e.esx {
			add = e.adoptESX
		}
		entry, err := add(spec)
		if err != nil {
			return err
		}
		dcs = append(dcs, entry)
	}
	// Storage first: VMs refer to datastores, and hosts list the LUNs behind them.
	for _, dc := range dcs {
		for i := range dc.spec.Datastores {
			e.addDatastore(dc, &dc.spec.Datastores[i])
		}
	}
	for _, dc := range dcs {
		for i := range dc.spec.VMs {
			if err := e.addVM(dc, &dc.spec.VMs[i]); err != nil {
				return err
			}
		}
	}
	for _, dc := range dcs {
		for i := range dc.spec.Clusters {
			for j := range dc.spec.Clusters[i].Hosts {
				e.configureHost(e.hosts[dc.spec.Clusters[i].Hosts[j].Name])
			}
		}
		for i := range dc.spec.StandaloneHosts {
			e.configureHost(e.hosts[dc.spec.StandaloneHosts[i].Name])
		}
	}
	for _, c := range e.clusters {
		e.configureCluster(c)
	}
	e.addSettings()
	e.installTelemetry()
	e.installLicences()
	e.installConfigTarget()
	e.installDirectPathProfiles()
	e.installSoftware()
	return nil
}

// addDatacenter creates a datacenter of a vCenter with its clusters and hosts.
func (e *estate) addDatacenter(spec *Datacenter) (*datacenterEntry, error) {
	dc, err := object.NewRootFolder(e.client).CreateDatacenter(e.ctx, vcName(spec.Name))
	if err != nil {
		return nil, fmt.Errorf("datacenter %q: %v", spec.Name, err)
	}
	folders, err := dc.Folders(e.ctx)
	if err != nil {
		return nil, fmt.Errorf("datacenter %q: %v", spec.Name, err)
	}
	entry := &datacenterEntry{spec: spec, obj: get(dc.Reference()).(*simulator.Datacenter), folders: folders}
	if err := e.addComputeResources(entry); err != nil {
		return nil, err
	}
	return entry, nil
}

// addSettings puts the scenario's vCenter advanced settings in content.setting,
// in name order, with the YAML value's type (boolean, integer or string).
func (e *estate) addSettings() {
	om := simulator.Map.OptionManager()
	var keys []string
	for k := range e.scenario.VCenter.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var value interface{}
		switch v := e.scenario.VCenter.Settings[k].(type) {
		case json.Number:
			n, err := v.Int64()
			if err == nil && n == int64(int32(n)) {
				value = int32(n)
			} else if err == nil {
				value = n
			} else {
				value = v.String()
			}
		default:
			value = v
		}
		om.Setting = append(om.Setting, &types.OptionValue{Key: k, Value: value})
	}
}

// vcName escapes a name the way vCenter stores entity names: '%', '/' and '\'
// become %25, %2f and %5c (ManagedEntity.name in the vSphere API reference).
func vcName(name string) string {
	if !strings.ContainsAny(name, "%/\\") {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		switch r {
		case '%':
			b.WriteString("%25")
		case '/':
			b.WriteString("%2f")
		case '\\':
			b.WriteString("%5c")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func get(ref types.ManagedObjectReference) mo.Reference {
	return simulator.Map.Get(ref)
}

// digest is the SHA-1 of the parts, the source of every derived identifier.
func digest(parts ...string) []byte {
	h := sha1.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}

func hexDigest(parts ...string) string {
	return hex.EncodeToString(digest(parts...))
}

// uuidFrom formats a name-derived (version 5 style) UUID.
func uuidFrom(parts ...string) string {
	b := digest(parts...)[:16]
	b[6] = (b[6] & 0x0f) | 0x50
	b[8] = (b[8] & 0x3f) | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// macFrom derives a MAC in VMware's 00:50:56 range.
func macFrom(parts ...string) string {
	b := digest(parts...)
	return fmt.Sprintf("00:50:56:%02x:%02x:%02x", b[0]&0x3f, b[1], b[2])
}

func boolPtr(b bool) *bool { return &b }

// signed16 is how ESXi sends PCI ids: as xsd:short, so 0x8086 arrives as -32634.
func signed16(v int) int16 { return int16(uint16(v)) }

// apiVersion compares dotted API versions such as 8.0.3.0.
type apiVersion [4]int

func parseAPIVersion(s string) (apiVersion, error) {
	var v apiVersion
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return v, fmt.Errorf("api_version %q: expected up to four numbers", s)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return v, fmt.Errorf("api_version %q: %v", s, err)
		}
		v[i] = n
	}
	return v, nil
}

func (v apiVersion) atLeast(major, minor, update, patch int) bool {
	want := apiVersion{major, minor, update, patch}
	for i := range v {
		if v[i] != want[i] {
			return v[i] > want[i]
		}
	}
	return true
}

// majorMinor turns 8.0.3 into 8.0 (about.licenseProductVersion).
func majorMinor(version string) string {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return version
	}
	return parts[0] + "." + parts[1]
}
