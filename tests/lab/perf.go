package main

// GPU performance counters. The simulator's PerformanceManager answers QueryPerf
// with random samples; the lab replaces its GPU counters (group "gpu") with the
// ones the scenario declares, numbered from vcenter.gpu_counter_key, and serves
// each GPU's series from the scenario: the same numbers in a live run and in a
// recorded one. Samples sit on interval boundaries, the latest at or before the
// query's end time, whatever the clock says; a series fills the most recent
// slots of the window and older slots carry -1 (no sample), as vCenter sends them.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

const realtimeInterval = 20 // seconds; ESXi keeps an hour of real-time samples

// gpuCounterSet is what each counter name brings: its rollups and unit.
var gpuCounterSet = map[string]struct {
	label, summary, unit, unitLabel string
	rollups                         []string
}{
	"utilization": {"Utilization", "The utilization of a GPU in percentages", "percent", "%", []string{"none", "average", "maximum", "minimum"}},
	"mem.used":    {"Memory used", "The amount of GPU memory used in kilobytes", "kiloBytes", "KB", []string{"none", "average", "maximum", "minimum"}},
	"mem.usage":   {"Memory usage", "The amount of GPU memory used in percentages of the total available", "percent", "%", []string{"none", "average", "maximum", "minimum"}},
	"temperature": {"Temperature", "The temperature of a GPU in degrees celsius", "celsius", "℃", []string{"average"}},
	"power.used":  {"Power used", "The amount of power used by a GPU in watts", "watt", "W", []string{"average"}},
}

// gpuCounterLevel is the statistics level at which vCenter keeps the GPU
// counters (the simulator's capture of a real vCenter says 4).
const gpuCounterLevel = 4

// historicalIntervals are vCenter's four defaults: past day, week, month, year.
var historicalIntervals = []struct {
	period, length int32
	name           string
}{
	{300, 86400, "Past day"},
	{1800, 604800, "Past week"},
	{7200, 2592000, "Past month"},
	{86400, 31536000, "Past year"},
}

type gpuSeries struct {
	instance string
	gpu      *GPU
}

type labPerfManager struct {
	simulator.PerformanceManager
	counters map[int32]string       // GPU counter key -> counter name
	level    int32                  // every historical interval's statistics level
	gpus     map[string][]gpuSeries // host moref -> its GPUs with a series
	vcenter  bool                   // a vCenter limits its historical queries; ESXi does not
}

// maxQueryMetricsKey is vCenter's limit on the metrics (counters times
// entities) of one historical QueryPerf; without the setting, vCenter 6.5 and
// later allow 256, and -1 (or 0) lifts the limit.
const (
	maxQueryMetricsKey     = "config.vpxd.stats.maxQueryMetrics"
	defaultMaxQueryMetrics = 256
)

// queryMetricLimit reads the limit from the advanced settings at query time,
// as vCenter does; 0 means none.
func queryMetricLimit() int {
	for _, opt := range simulator.Map.OptionManager().Setting {
		setting := opt.GetOptionValue()
		if setting.Key != maxQueryMetricsKey {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(fmt.Sprint(setting.Value)))
		if err != nil || n <= 0 {
			return 0
		}
		return n
	}
	return defaultMaxQueryMetrics
}

// installTelemetry replaces the GPU counters and answers QueryPerf for them.
func (e *estate) installTelemetry() {
	ref := *e.model.ServiceContent.PerfManager
	orig := simulator.Map.Get(ref).(*simulator.PerformanceManager)
	pm := &labPerfManager{
		PerformanceManager: *orig,
		counters:           map[int32]string{},
		level:              e.scenario.VCenter.StatisticsLevel,
		gpus:               map[string][]gpuSeries{},
		vcenter:            !e.esx,
	}
	var kept []types.PerfCounterInfo
	for _, c := range orig.PerfCounter {
		if c.GroupInfo.GetElementDescription().Key != "gpu" {
			kept = append(kept, c)
		}
	}
	key := e.scenario.VCenter.GPUCounterKey
	for _, name := range e.scenario.VCenter.GPUCounters {
		set := gpuCounterSet[name]
		for _, rollup := range set.rollups {
			kept = append(kept, types.PerfCounterInfo{
				Key:            key,
				NameInfo:       &types.ElementDescription{Description: types.Description{Label: set.label, Summary: set.summary}, Key: name},
				GroupInfo:      &types.ElementDescription{Description: types.Description{Label: "GPU", Summary: "GPU"}, Key: "gpu"},
				UnitInfo:       &types.ElementDescription{Description: types.Description{Label: set.unitLabel, Summary: set.unit}, Key: set.unit},
				RollupType:     types.PerfSummaryType(rollup),
				StatsType:      types.PerfStatsTypeAbsolute,
				Level:          gpuCounterLevel,
				PerDeviceLevel: gpuCounterLevel,
			})
			pm.counters[key] = name
			key++
		}
	}
	pm.PerfCounter = kept
	pm.HistoricalInterval = nil
	if e.esx {
		// ESXi's one interval has no level (0), so a historical query gets no GPU values.
		pm.HistoricalInterval = []types.PerfInterval{esxHistoricalInterval}
	} else {
		for i, iv := range historicalIntervals {
			pm.HistoricalInterval = append(pm.HistoricalInterval, types.PerfInterval{
				Key: int32(i + 1), SamplingPeriod: iv.period, Name: iv.name, Length: iv.length,
				Level: pm.level, Enabled: true,
			})
		}
	}
	for _, h := range e.hosts {
		if !h.connected() {
			continue
		}
		// The host driver numbers gpuN over the GPUs it owns: those in Shared or
		// Shared Direct mode and not in active passthrough, in PCI order.
		gpus := append([]GPU(nil), h.spec.GPUs...)
		sort.Slice(gpus, func(i, j int) bool { return gpus[i].PciID < gpus[j].PciID })
		owned := 0
		for i := range gpus {
			index := -1
			if (gpus[i].GraphicsType == "shared" || gpus[i].GraphicsType == "sharedDirect") && !gpus[i].Passthrough.Active {
				index = owned
				owned++
			}
			for j := range h.spec.GPUs {
				g := &h.spec.GPUs[j]
				if g.PciID != gpus[i].PciID || g.Telemetry == nil {
					continue
				}
				instance := g.PciID
				switch h.spec.GPUCounterInstances {
				case "index":
					if index < 0 {
						continue // the host driver gives a GPU it does not own no number
					}
					instance = fmt.Sprintf("gpu%d", index)
				case "decimal":
					instance = decimalPciID(g.PciID)
				case "opaque":
					instance = fmt.Sprintf("nvgpu%d", i)
				}
				pm.gpus[h.obj.Self.Value] = append(pm.gpus[h.obj.Self.Value], gpuSeries{instance, g})
			}
		}
	}
	simulator.Map.Put(pm)
}

func (p *labPerfManager) QueryPerfCounter(req *types.QueryPerfCounter) soap.HasFault {
	body := &methods.QueryPerfCounterBody{Res: &types.QueryPerfCounterResponse{}}
	byKey := map[int32]types.PerfCounterInfo{}
	for _, c := range p.PerfCounter {
		byKey[c.Key] = c
	}
	for _, id := range req.CounterId {
		info, ok := byKey[id]
		if !ok {
			body.Res = nil
			body.Fault_ = simulator.Fault("", &types.InvalidArgument{InvalidProperty: "counterId"})
			return body
		}
		body.Res.Returnval = append(body.Res.Returnval, info)
	}
	return body
}

func (p *labPerfManager) QueryPerf(ctx *simulator.Context, req *types.QueryPerf) soap.HasFault {
	body := &methods.QueryPerfBody{Res: &types.QueryPerfResponse{}}
	if limit := queryMetricLimit(); p.vcenter && limit > 0 && historicalMetrics(req) > limit {
		body.Res = nil
		body.Fault_ = simulator.Fault(
			fmt.Sprintf("This operation is restricted by the administrator - '%s'. Contact your system administrator.", strings.TrimPrefix(maxQueryMetricsKey, "config.")),
			&types.RestrictedByAdministrator{Details: strings.TrimPrefix(maxQueryMetricsKey, "config.")},
		)
		return body
	}
	for _, qs := range req.QuerySpec {
		if !p.asksForGPU(qs) {
			// Anything else keeps the simulator's answer.
			other := p.PerformanceManager.QueryPerf(ctx, &types.QueryPerf{This: req.This, QuerySpec: []types.PerfQuerySpec{qs}})
			res := other.(*methods.QueryPerfBody)
			if res.Fault_ != nil {
				return res
			}
			body.Res.Returnval = append(body.Res.Returnval, res.Res.Returnval...)
			continue
		}
		if qs.Entity.Type != "HostSystem" || simulator.Map.Get(qs.Entity) == nil {
			body.Res = nil
			body.Fault_ = simulator.Fault("", &types.InvalidArgument{InvalidProperty: "entity"})
			return body
		}
		body.Res.Returnval = append(body.Res.Returnval, p.hostMetrics(qs))
	}
	return body
}

// historicalMetrics counts the metrics of a query's historical specs, one per
// counter and entity: real-time queries are not limited.
func historicalMetrics(req *types.QueryPerf) int {
	n := 0
	for _, qs := range req.QuerySpec {
		if qs.IntervalId > 0 && qs.IntervalId != realtimeInterval {
			n += len(qs.MetricId)
		}
	}
	return n
}

func (p *labPerfManager) asksForGPU(qs types.PerfQuerySpec) bool {
	for _, id := range qs.MetricId {
		if _, ok := p.counters[id.CounterId]; ok {
			return true
		}
	}
	return false
}

type servedSeries struct {
	id     types.PerfMetricId
	values []int64
}

// hostMetrics answers one host's spec: one series per GPU counter and instance.
func (p *labPerfManager) hostMetrics(qs types.PerfQuerySpec) types.BasePerfEntityMetricBase {
	interval := qs.IntervalId
	if interval <= 0 {
		interval = realtimeInterval
	}
	step := time.Duration(interval) * time.Second
	end := time.Now().UTC()
	if qs.EndTime != nil {
		end = qs.EndTime.UTC()
	}
	start := end.Add(-time.Hour)
	if qs.StartTime != nil {
		start = qs.StartTime.UTC()
	}
	if interval == realtimeInterval && end.Sub(start) > time.Hour {
		start = end.Add(-time.Hour)
	}
	last := end.Truncate(step)
	var slots []time.Time // oldest first
	for t := last; t.After(start); t = t.Add(-step) {
		slots = append([]time.Time{t}, slots...)
	}
	historical := interval != realtimeInterval
	var served []servedSeries
	for _, id := range qs.MetricId {
		name, ok := p.counters[id.CounterId]
		if !ok || (historical && p.level < gpuCounterLevel) {
			continue
		}
		for _, g := range p.gpus[qs.Entity.Value] {
			if id.Instance != "*" && id.Instance != g.instance {
				continue
			}
			raw := seriesFor(name, g.gpu)
			if raw == nil {
				continue
			}
			values := make([]int64, len(slots))
			for i := range values {
				values[i] = -1
			}
			n := len(raw)
			if n > len(slots) {
				raw, n = raw[n-len(slots):], len(slots)
			}
			for i, v := range raw {
				values[len(slots)-n+i] = v
			}
			served = append(served, servedSeries{types.PerfMetricId{CounterId: id.CounterId, Instance: g.instance}, values})
		}
	}
	if len(served) == 0 {
		slots = nil
	}
	if qs.Format == string(types.PerfFormatCsv) {
		m := &types.PerfEntityMetricCSV{PerfEntityMetricBase: types.PerfEntityMetricBase{Entity: qs.Entity}}
		var info []string
		for _, t := range slots {
			info = append(info, strconv.Itoa(int(interval)), t.Format(time.RFC3339))
		}
		m.SampleInfoCSV = strings.Join(info, ",")
		for _, s := range served {
			text := make([]string, len(s.values))
			for i, v := range s.values {
				text[i] = strconv.FormatInt(v, 10)
			}
			m.Value = append(m.Value, types.PerfMetricSeriesCSV{PerfMetricSeries: types.PerfMetricSeries{Id: s.id}, Value: strings.Join(text, ",")})
		}
		return m
	}
	m := &types.PerfEntityMetric{PerfEntityMetricBase: types.PerfEntityMetricBase{Entity: qs.Entity}}
	for _, t := range slots {
		m.SampleInfo = append(m.SampleInfo, types.PerfSampleInfo{Timestamp: t, Interval: interval})
	}
	for _, s := range served {
		m.Value = append(m.Value, &types.PerfMetricIntSeries{PerfMetricSeries: types.PerfMetricSeries{Id: s.id}, Value: s.values})
	}
	return m
}

// seriesFor is a GPU's series for one counter in the counter's unit: percentages
// in hundredths, memory in kilobytes; nil when the scenario gives none.
func seriesFor(name string, g *GPU) []int64 {
	t := g.Telemetry
	scale := func(values []float64, factor float64) []int64 {
		if len(values) == 0 {
			return nil
		}
		out := make([]int64, len(values))
		for i, v := range values {
			out[i] = int64(math.Round(v * factor))
		}
		return out
	}
	switch name {
	case "utilization":
		return scale(t.Utilization, 100)
	case "mem.used":
		return scale(t.MemoryUsedMB, 1024)
	case "mem.usage":
		if g.MemoryMB <= 0 {
			return nil
		}
		return scale(t.MemoryUsedMB, 10000/float64(g.MemoryMB))
	case "temperature":
		return scale(t.TemperatureC, 1)
	case "power.used":
		return scale(t.PowerW, 1)
	}
	return nil
}

// decimalPciID writes 0000:3b:00.0 in ESXi's three-digit decimal form, 000:059:00.0
// (as esx.conf does).
func decimalPciID(id string) string {
	bus, slot, function := pciAddress(id)
	segment, _ := strconv.ParseUint(strings.SplitN(id, ":", 2)[0], 16, 16)
	return fmt.Sprintf("%03d:%03d:%02d.%d", segment, bus, slot, function)
}
