package main

// A PropertyCollector that pages like vCenter. The simulator's collector ignores
// RetrieveOptions.maxObjects and never returns a token, so a client that forgets
// ContinueRetrievePropertiesEx would pass against it and lose objects against a
// real vCenter. This one returns at most maxObjects objects per call and keeps
// the rest behind a token.

import (
	"strconv"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
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
	res := pc.PropertyCollector.RetrievePropertiesEx(ctx, req)
	body, ok := res.(*methods.RetrievePropertiesExBody)
	if !ok || body.Res == nil || body.Res.Returnval == nil {
		return res
	}
	result := pc.page(body.Res.Returnval.Objects, req.Options.MaxObjects)
	if len(result.Objects) == 0 {
		// vCenter answers an empty result with no returnval at all.
		body.Res.Returnval = nil
	} else {
		body.Res.Returnval = &result
	}
	return body
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
