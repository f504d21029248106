package main

// A PropertyCollector that pages like vCenter. The simulator's collector ignores
// RetrieveOptions.maxObjects and never returns a token, so a client that forgets
// ContinueRetrievePropertiesEx would pass against it and lose objects against a
// real vCenter. This one returns at most maxObjects objects per call and keeps
// the rest behind a token.

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

type pagingCollector struct {
	simulator.PropertyCollector

	// The simulator serialises calls per object only for objects that lock;
	// the collector does not, so its pages need their own lock.
	pagesMu sync.Mutex
	pages   map[string]pending
	next    int
}

// pending is what a token stands for: the objects not yet returned, and the
// page size of the call that began the retrieval.
type pending struct {
	objects []types.ObjectContent
	size    int32
}

// installPagingCollector replaces the service's root PropertyCollector. Each
// session gets its own copy of it (simulator.Session.Get), and collectors made
// with CreatePropertyCollector page too.
func installPagingCollector() {
	pc := &pagingCollector{}
	pc.Self = simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance).Content.PropertyCollector
	simulator.Map.Put(pc)
}

func (pc *pagingCollector) RetrievePropertiesEx(ctx *simulator.Context, req *types.RetrievePropertiesEx) soap.HasFault {
	if fault := checkPaths(req.SpecSet); fault != nil {
		return &methods.RetrievePropertiesExBody{Fault_: fault}
	}
	res := pc.PropertyCollector.RetrievePropertiesEx(ctx, req)
	body, ok := res.(*methods.RetrievePropertiesExBody)
	if !ok || body.Res == nil || body.Res.Returnval == nil {
		return res
	}
	result := pc.page(withhold(req.SpecSet, hide(body.Res.Returnval.Objects)), req.Options.MaxObjects)
	if len(result.Objects) == 0 {
		// vCenter answers an empty result with no returnval at all.
		body.Res.Returnval = nil
	} else {
		body.Res.Returnval = &result
	}
	return body
}

func (pc *pagingCollector) RetrieveProperties(ctx *simulator.Context, req *types.RetrieveProperties) soap.HasFault {
	if fault := checkPaths(req.SpecSet); fault != nil {
		return &methods.RetrievePropertiesBody{Fault_: fault}
	}
	res := pc.PropertyCollector.RetrieveProperties(ctx, req)
	if body, ok := res.(*methods.RetrievePropertiesBody); ok && body.Res != nil {
		body.Res.Returnval = withhold(req.SpecSet, hide(body.Res.Returnval))
	}
	return res
}

func (pc *pagingCollector) ContinueRetrievePropertiesEx(req *types.ContinueRetrievePropertiesEx) soap.HasFault {
	body := &methods.ContinueRetrievePropertiesExBody{}
	pc.pagesMu.Lock()
	rest, ok := pc.pages[req.Token]
	delete(pc.pages, req.Token)
	pc.pagesMu.Unlock()
	if !ok {
		body.Fault_ = simulator.Fault("", &types.InvalidArgument{InvalidProperty: "token"})
		return body
	}
	body.Res = &types.ContinueRetrievePropertiesExResponse{Returnval: pc.page(rest.objects, rest.size)}
	return body
}

func (pc *pagingCollector) CancelRetrievePropertiesEx(req *types.CancelRetrievePropertiesEx) soap.HasFault {
	pc.pagesMu.Lock()
	_, ok := pc.pages[req.Token]
	delete(pc.pages, req.Token)
	pc.pagesMu.Unlock()
	body := &methods.CancelRetrievePropertiesExBody{}
	if !ok {
		body.Fault_ = simulator.Fault("", &types.InvalidArgument{InvalidProperty: "token"})
		return body
	}
	body.Res = &types.CancelRetrievePropertiesExResponse{}
	return body
}

func (pc *pagingCollector) CreatePropertyCollector(ctx *simulator.Context, req *types.CreatePropertyCollector) soap.HasFault {
	return &methods.CreatePropertyCollectorBody{
		Res: &types.CreatePropertyCollectorResponse{Returnval: ctx.Session.Put(&pagingCollector{}).Reference()},
	}
}

// page returns the first max objects and keeps the rest behind a new token.
func (pc *pagingCollector) page(objects []types.ObjectContent, max int32) types.RetrieveResult {
	if max <= 0 || int(max) >= len(objects) {
		return types.RetrieveResult{Objects: objects}
	}
	pc.pagesMu.Lock()
	defer pc.pagesMu.Unlock()
	if pc.pages == nil {
		pc.pages = map[string]pending{}
	}
	pc.next++
	token := strconv.Itoa(pc.next)
	pc.pages[token] = pending{objects: objects[max:], size: max}
	return types.RetrieveResult{Token: token, Objects: objects[:max]}
}

// Property paths cannot step into the elements of a list
// ("config.hardware.device.backing"): vCenter answers InvalidProperty, and the
// simulator's collector panics, which drops the connection. managedTypes are
// the types whose paths are checked before the simulator sees them.
var managedTypes = map[string]reflect.Type{
	"ManagedEntity":          reflect.TypeOf(mo.ManagedEntity{}),
	"Folder":                 reflect.TypeOf(mo.Folder{}),
	"Datacenter":             reflect.TypeOf(mo.Datacenter{}),
	"ComputeResource":        reflect.TypeOf(mo.ComputeResource{}),
	"ClusterComputeResource": reflect.TypeOf(mo.ClusterComputeResource{}),
	"HostSystem":             reflect.TypeOf(mo.HostSystem{}),
	"ResourcePool":           reflect.TypeOf(mo.ResourcePool{}),
	"VirtualMachine":         reflect.TypeOf(mo.VirtualMachine{}),
	"Datastore":              reflect.TypeOf(mo.Datastore{}),
	"Network":                reflect.TypeOf(mo.Network{}),
}

func checkPaths(specs []types.PropertyFilterSpec) *soap.Fault {
	for _, spec := range specs {
		for _, ps := range spec.PropSet {
			t, ok := managedTypes[ps.Type]
			if !ok {
				continue
			}
			for _, path := range ps.PathSet {
				if stepsIntoList(t, path) {
					return simulator.Fault(fmt.Sprintf("property path %q steps into a list", path), &types.InvalidProperty{Name: path})
				}
			}
		}
	}
	return nil
}

// stepsIntoList follows a path through struct fields; it stops, allowing the
// path, at an interface (the simulator resolves those at run time) or at a
// field it does not know (the simulator reports it in missingSet).
func stepsIntoList(t reflect.Type, path string) bool {
	parts := strings.Split(path, ".")
	for _, name := range parts {
		for t.Kind() == reflect.Ptr {
			t = t.Elem()
		}
		if t.Kind() == reflect.Slice {
			return true // parts[i] would name a field of a list
		}
		if t.Kind() != reflect.Struct || name == "" {
			return false
		}
		f, ok := t.FieldByName(strings.ToUpper(name[:1]) + name[1:])
		if !ok {
			return false
		}
		t = f.Type
	}
	return false
}
