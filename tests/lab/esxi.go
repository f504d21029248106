package main

// A standalone ESXi host (vcenter.kind esxi). The simulator's ESX model is what
// a client sees when it logs in to ESXi itself: ServiceContent.about.apiType
// "HostAgent", the datacenter ha-datacenter with its folders, and one host,
// ha-host, in its compute resource ha-compute-res. The scenario's one host
// becomes that host; its datastores and VMs are built as for a vCenter. There is
// no licence assignment manager (licence.go) and one historical interval that
// keeps no GPU counters (perf.go): only the last hour of real-time samples.

import (
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/simulator/esx"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// adoptESX takes the ESX model's datacenter and host for the scenario's.
func (e *estate) adoptESX(spec *Datacenter) (*datacenterEntry, error) {
	ref := esx.Datacenter.Reference()
	folders, err := object.NewDatacenter(e.client, ref).Folders(e.ctx)
	if err != nil {
		return nil, fmt.Errorf("datacenter %q: %v", spec.Name, err)
	}
	dc := &datacenterEntry{spec: spec, obj: get(ref).(*simulator.Datacenter), folders: folders}
	// The template lists a datastore and a network that the model never creates.
	dc.obj.Datastore = nil

	hostSpec := &spec.StandaloneHosts[0]
	host := get(esx.HostSystem.Reference()).(*simulator.HostSystem)
	host.Name = vcName(hostSpec.Name)
	// On ESXi the compute resource carries the host's name.
	cr := get(*host.Parent).(*mo.ComputeResource)
	cr.Name = host.Name
	summary := e.computeSummary([]Host{*hostSpec})
	cr.Summary = &summary
	e.hosts[hostSpec.Name] = &hostEntry{
		spec:            hostSpec,
		obj:             host,
		dc:              dc,
		computeResource: cr,
		pool:            *cr.ResourcePool,
		gpuVMs:          map[string][]types.ManagedObjectReference{},
	}
	return dc, nil
}

// esxHistoricalInterval is ESXi's one historical interval: read-only, with no
// statistics level, and (the vSphere Web Services SDK Programming Guide, "ESXi
// Server Performance Intervals") no 5-minute rollups for a client of the host
// itself. The lab serves no GPU values for it.
var esxHistoricalInterval = types.PerfInterval{
	Key: 1, SamplingPeriod: 300, Name: "PastDay", Length: 129600, Enabled: true,
}
