// allocator-oracle asks the scheduler's structured allocator (k8s.io/dynamic-resource-allocation
// v0.37.2, structured.NewAllocator(...).Allocate) whether a claim can be allocated, as
// kube-scheduler's DynamicResources plugin asks it: per node, with the devices other claims hold
// (gathered as the plugin's foreachAllocatedDevice does) and the feature gates at 1.37's
// defaults.
//
// It reads one JSON request per line (the format of tests/allocator/feasibility_driver):
//
//	{"objects": [ResourceSlice, DeviceClass, ResourceClaim (allocated), ...], "claim": {...}}
//
// and prints one JSON line per request: {"outcome": "fits" | "now" | "never" | "error",
// "node", "message"}: "fits" when some node (in name order) gets an allocation; "error" when
// Allocate fails on some node (the scheduler then fails the Pod, whatever other nodes offer); "now"
// when no node fits with the held devices but one does on the same hardware without them;
// "never" otherwise ("free": "error" when Allocate fails on that hardware).
// DeviceTaintRules among the objects reach the allocator as the scheduler passes them: their
// taints added to the slices by the ResourceSlice tracker (resourceslice/tracker, fed by informers
// over a fake clientset).
// --derived-attributes turns DRADerivedAttributes on, --list-attributes DRAListTypeAttributes.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/dynamic-resource-allocation/structured"
)

// The scheduler's structured.Features at 1.37's default gates (dynamicresources.go
// allocatorFeatures, pkg/features/kube_features.go).
var features = structured.Features{
	AdminAccess:             true,
	PrioritizedList:         true,
	PartitionableDevices:    true,
	DeviceTaints:            true,
	DeviceBindingAndStatus:  true,
	ConsumableCapacity:      true,
	FractionalCapacityRange: true,
}

type request struct {
	Objects []json.RawMessage `json:"objects"`
	Claim   json.RawMessage   `json:"claim"`
}

type answer struct {
	Outcome string `json:"outcome"`
	Node    string `json:"node,omitempty"`
	Message string `json:"message,omitempty"`
	Free    string `json:"free,omitempty"` // "error": Allocate fails without the held devices
}

type classes map[string]*resourceapi.DeviceClass

func (c classes) List() ([]*resourceapi.DeviceClass, error) {
	list := make([]*resourceapi.DeviceClass, 0, len(c))
	for _, class := range c {
		list = append(list, class)
	}
	return list, nil
}

func (c classes) Get(name string) (*resourceapi.DeviceClass, error) {
	if class, found := c[name]; found {
		return class, nil
	}
	return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclasses"), name)
}

type cluster struct {
	slices  []*resourceapi.ResourceSlice
	rules   []*resourceapi.DeviceTaintRule
	classes classes
	claims  []*resourceapi.ResourceClaim
	nodes   []string
}

func read(in request) (cluster, *resourceapi.ResourceClaim, error) {
	state := cluster{classes: classes{}}
	nodes := sets.New[string]()
	for _, raw := range in.Objects {
		var meta metav1.TypeMeta
		if err := json.Unmarshal(raw, &meta); err != nil {
			return state, nil, err
		}
		switch meta.Kind {
		case "ResourceSlice":
			slice := &resourceapi.ResourceSlice{}
			if err := json.Unmarshal(raw, slice); err != nil {
				return state, nil, fmt.Errorf("ResourceSlice: %w", err)
			}
			state.slices = append(state.slices, slice)
			if slice.Spec.NodeName != nil {
				nodes.Insert(*slice.Spec.NodeName)
			}
		case "DeviceTaintRule":
			rule := &resourceapi.DeviceTaintRule{}
			if err := json.Unmarshal(raw, rule); err != nil {
				return state, nil, fmt.Errorf("DeviceTaintRule: %w", err)
			}
			state.rules = append(state.rules, rule)
		case "DeviceClass":
			class := &resourceapi.DeviceClass{}
			if err := json.Unmarshal(raw, class); err != nil {
				return state, nil, fmt.Errorf("DeviceClass: %w", err)
			}
			state.classes[class.Name] = class
		case "ResourceClaim":
			claim := &resourceapi.ResourceClaim{}
			if err := json.Unmarshal(raw, claim); err != nil {
				return state, nil, fmt.Errorf("ResourceClaim: %w", err)
			}
			state.claims = append(state.claims, claim)
		default:
			return state, nil, fmt.Errorf("unexpected kind %q", meta.Kind)
		}
	}
	state.nodes = sets.List(nodes)
	claim := &resourceapi.ResourceClaim{}
	if err := json.Unmarshal(in.Claim, claim); err != nil {
		return state, nil, fmt.Errorf("claim: %w", err)
	}
	return state, claim, nil
}

// patched gives the slices with the DeviceTaintRules' taints, as kube-scheduler's DRA manager
// lists them (tracker.ListPatchedResourceSlices with DRADeviceTaintRules on).
func patched(ctx context.Context, state cluster) ([]*resourceapi.ResourceSlice, error) {
	if len(state.rules) == 0 {
		return state.slices, nil
	}
	objects := make([]runtime.Object, 0, len(state.slices)+len(state.rules))
	for _, slice := range state.slices {
		objects = append(objects, slice)
	}
	for _, rule := range state.rules {
		objects = append(objects, rule)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	factory := informers.NewSharedInformerFactory(fake.NewSimpleClientset(objects...), 0)
	sliceTracker, err := tracker.StartTracker(ctx, tracker.Options{
		EnableDeviceTaintRules:   true,
		EnableConsumableCapacity: true,
		SliceInformer:            factory.Resource().V1().ResourceSlices(),
		TaintInformer:            factory.Resource().V1().DeviceTaintRules(),
	})
	if err != nil {
		return nil, err
	}
	defer sliceTracker.Stop()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer cancel() // before Shutdown waits for the informers
	select {
	case <-sliceTracker.HasSyncedChecker().Done():
	case <-ctx.Done():
		return nil, fmt.Errorf("ResourceSlice tracker: not synced: %w", ctx.Err())
	}
	return sliceTracker.ListPatchedResourceSlices()
}

// allocated is what the state's claims hold, as the scheduler's claim tracker gathers it
// (foreachAllocatedDevice with DRAConsumableCapacity on).
func allocated(claims []*resourceapi.ResourceClaim) structured.AllocatedState {
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, claim := range claims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, result := range claim.Status.Allocation.Devices.Results {
			if result.AdminAccess != nil && *result.AdminAccess {
				continue
			}
			id := structured.MakeDeviceID(result.Driver, result.Pool, result.Device)
			if result.ShareID != nil {
				state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, result.ShareID))
				if result.ConsumedCapacity != nil {
					state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, result.ConsumedCapacity))
				}
				continue
			}
			state.AllocatedDevices.Insert(id)
		}
	}
	return state
}

// fits: the first node (by name) the allocator gives an allocation on, or the first node where
// Allocate fails. Every node is asked, as the scheduler filters every node of a small cluster:
// an error on any of them fails the Pod's scheduling cycle, whatever the others offer.
func fits(ctx context.Context, state cluster, slices []*resourceapi.ResourceSlice,
	held structured.AllocatedState, claim *resourceapi.ResourceClaim, cache *cel.Cache) (string, error) {
	allocator, err := structured.NewAllocator(ctx, features, held, state.classes, slices, cache)
	if err != nil {
		return "", err
	}
	first := ""
	for _, name := range state.nodes {
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{"kubernetes.io/hostname": name}}}
		results, err := allocator.Allocate(ctx, node, []*resourceapi.ResourceClaim{claim.DeepCopy()})
		if errors.Is(err, structured.ErrFailedAllocationOnNode) {
			continue // the scheduler: unschedulable on this node only (invalid pools)
		}
		if err != nil {
			return name, err
		}
		if len(results) > 0 && first == "" {
			first = name
		}
	}
	return first, nil
}

func evaluate(cache *cel.Cache, line []byte) answer {
	var in request
	if err := json.Unmarshal(line, &in); err != nil {
		return answer{Outcome: "bad_request", Message: err.Error()}
	}
	state, claim, err := read(in)
	if err != nil {
		return answer{Outcome: "bad_request", Message: err.Error()}
	}
	ctx := context.Background()
	slices, err := patched(ctx, state)
	if err != nil {
		return answer{Outcome: "bad_request", Message: err.Error()}
	}
	node, err := fits(ctx, state, slices, allocated(state.claims), claim, cache)
	if err != nil {
		return answer{Outcome: "error", Node: node, Message: err.Error()}
	}
	if node != "" {
		return answer{Outcome: "fits", Node: node}
	}
	free := structured.AllocatedState{AllocatedDevices: sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection()}
	node, err = fits(ctx, state, slices, free, claim, cache)
	if err != nil {
		// Not now, and on the free hardware an error: "free" says so.
		return answer{Outcome: "never", Free: "error", Message: err.Error()}
	}
	if node != "" {
		return answer{Outcome: "now", Node: node}
	}
	return answer{Outcome: "never"}
}

func main() {
	flag.BoolVar(&features.DerivedAttributes, "derived-attributes", false,
		"turn DRADerivedAttributes on (alpha in 1.37, off by default)")
	flag.BoolVar(&features.ListTypeAttributes, "list-attributes", false,
		"turn DRAListTypeAttributes on (alpha in 1.37, off by default)")
	flag.Parse()
	cache := cel.NewCache(100, cel.Features{EnableConsumableCapacity: true,
		EnableListTypeAttributes: features.ListTypeAttributes})
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	encoder := json.NewEncoder(out)
	encoder.SetEscapeHTML(false)
	for scanner.Scan() {
		if len(scanner.Bytes()) == 0 {
			continue
		}
		if err := encoder.Encode(evaluate(cache, scanner.Bytes())); err != nil {
			fmt.Fprintln(os.Stderr, "allocator-oracle:", err)
			os.Exit(1)
		}
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "allocator-oracle: reading stdin:", err)
		os.Exit(1)
	}
}
