package main

// vSphere licences. The simulator puts every host in evaluation mode; the lab
// assigns the licences the scenario declares: LicenseManager.licenses lists each
// distinct licence once, and QueryAssignedLicenses answers with the vCenter's
// and every host's assignment (all of them without an entity, or the one asked
// for), each carrying its licence with the edition, expiry and features. A
// standalone ESXi host has no assignment manager; its LicenseManager.licenses
// holds its own licence alone.

import (
	"strings"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

type labLicenceAssignments struct {
	simulator.LicenseAssignmentManager
	assignments []types.LicenseAssignmentManagerLicenseAssignment
}

func licenceInfo(l *Licence) types.LicenseManagerLicenseInfo {
	info := types.LicenseManagerLicenseInfo{
		LicenseKey: l.Key,
		EditionKey: l.Edition,
		Name:       l.Name,
		Total:      0,
		CostUnit:   "cpuPackage",
	}
	product := "VMware ESX Server"
	if l.Edition == "eval" {
		product = "Evaluation Mode"
	} else if strings.HasPrefix(l.Edition, "vc.") {
		product = "VMware VirtualCenter Server"
		info.CostUnit = "server"
	} else if strings.HasSuffix(l.Edition, ".cpuCoreMin") {
		// Per-core subscriptions (vSphere Foundation, VCF) count cores, 16 per CPU at least.
		info.CostUnit = "cpuCore:16core"
	}
	info.Properties = append(info.Properties, types.KeyAnyValue{Key: "ProductName", Value: product})
	if l.Expires != nil {
		if day, err := time.Parse("2006-01-02", *l.Expires); err == nil {
			info.Properties = append(info.Properties, types.KeyAnyValue{Key: "expirationDate", Value: day.UTC()})
		}
	}
	for _, f := range l.Features {
		info.Properties = append(info.Properties, types.KeyAnyValue{Key: "feature", Value: types.KeyValue{Key: f.Key, Value: f.Name}})
	}
	return info
}

// installLicences serves the scenario's licences and their assignments.
func (e *estate) installLicences() {
	content := e.model.ServiceContent
	lm := simulator.Map.Get(*content.LicenseManager).(*simulator.LicenseManager)
	if e.esx {
		// ESXi has no assignment manager: its LicenseManager lists its own licence.
		host := &e.scenario.Datacenters[0].StandaloneHosts[0]
		lm.Licenses = []types.LicenseManagerLicenseInfo{licenceInfo(&host.Licence)}
		return
	}
	if lm.LicenseAssignmentManager == nil {
		return
	}
	orig := simulator.Map.Get(*lm.LicenseAssignmentManager).(*simulator.LicenseAssignmentManager)
	lam := &labLicenceAssignments{LicenseAssignmentManager: *orig}
	seen := map[string]bool{}
	lm.Licenses = nil
	assign := func(entity, name, scope string, l *Licence) {
		info := licenceInfo(l)
		if !seen[l.Key] {
			seen[l.Key] = true
			lm.Licenses = append(lm.Licenses, info)
		}
		lam.assignments = append(lam.assignments, types.LicenseAssignmentManagerLicenseAssignment{
			EntityId:          entity,
			Scope:             scope,
			EntityDisplayName: name,
			AssignedLicense:   info,
		})
	}
	instance := simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance).Content.About.InstanceUuid
	assign(instance, e.scenario.VCenter.Name, "", &e.scenario.VCenter.Licence)
	for _, dc := range e.scenario.Datacenters {
		var hosts []*Host
		for i := range dc.Clusters {
			for j := range dc.Clusters[i].Hosts {
				hosts = append(hosts, &dc.Clusters[i].Hosts[j])
			}
		}
		for i := range dc.StandaloneHosts {
			hosts = append(hosts, &dc.StandaloneHosts[i])
		}
		for _, spec := range hosts {
			h := e.hosts[spec.Name]
			assign(h.obj.Self.Value, vcName(spec.Name), instance, &spec.Licence)
		}
	}
	simulator.Map.Put(lam)
}

func (m *labLicenceAssignments) QueryAssignedLicenses(req *types.QueryAssignedLicenses) soap.HasFault {
	body := &methods.QueryAssignedLicensesBody{Res: &types.QueryAssignedLicensesResponse{}}
	for _, a := range m.assignments {
		if req.EntityId == "" || req.EntityId == a.EntityId {
			body.Res.Returnval = append(body.Res.Returnval, a)
		}
	}
	return body
}
