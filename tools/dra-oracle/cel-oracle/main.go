// cel-oracle evaluates DRA device selectors with k8s.io/dynamic-resource-allocation/cel, the
// library kube-scheduler's allocator calls, exactly as the allocator does (selectorsMatch):
// compiled by cel.Cache.GetOrCompile (the StoredExpressions environment, the cost estimate, the
// runtime cost limit resourceapi.CELSelectorExpressionMaxCost), evaluated by DeviceMatches.
//
// It reads one JSON request per line, the format of tests/cel/cel_eval_driver:
//
//	{"expr": "...", "device": {"driver": "d", "attributes": {"domain": {"name": {"int": "3"}}},
//	                           "capacity": {"domain": {"name": "40Gi"}}}}
//
// (attribute values {"int": "3"}, {"bool": true}, {"string": "s"}, {"version": "1.2.3"}), and
// prints one JSON line per request: {"outcome": "true|false|error|compile_error", "message"}.
// "compile_error" is what the API server refuses when the selector is stored; "error" is a
// runtime error, which fails the allocation. Feature gates are 1.37's defaults
// (DRAConsumableCapacity on, DRAListTypeAttributes off), as the scheduler passes them.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/dynamic-resource-allocation/cel"
)

type request struct {
	Expr   string  `json:"expr"`
	Device *device `json:"device"`
}

type device struct {
	Driver     string                               `json:"driver"`
	Attributes map[string]map[string]map[string]any `json:"attributes"`
	Capacity   map[string]map[string]string         `json:"capacity"`
}

type answer struct {
	Outcome string `json:"outcome"`
	Message string `json:"message,omitempty"`
}

func attribute(typed map[string]any) (resourceapi.DeviceAttribute, error) {
	for kind, value := range typed {
		switch kind {
		case "int":
			text, _ := value.(string)
			number, err := strconv.ParseInt(text, 10, 64)
			if err != nil {
				return resourceapi.DeviceAttribute{}, fmt.Errorf("int %q: %w", text, err)
			}
			return resourceapi.DeviceAttribute{IntValue: &number}, nil
		case "bool":
			flag, ok := value.(bool)
			if ok {
				return resourceapi.DeviceAttribute{BoolValue: &flag}, nil
			}
		case "string":
			text, ok := value.(string)
			if ok {
				return resourceapi.DeviceAttribute{StringValue: &text}, nil
			}
		case "version":
			text, ok := value.(string)
			if ok {
				return resourceapi.DeviceAttribute{VersionValue: &text}, nil
			}
		}
	}
	return resourceapi.DeviceAttribute{}, fmt.Errorf("unsupported attribute %v", typed)
}

// celDevice is the cel.Device the allocator builds from a published device: attributes and
// capacity under their qualified names (a name in the driver's own domain stays qualified, as
// the library resolves both spellings alike).
func celDevice(in *device) (cel.Device, error) {
	out := cel.Device{Driver: in.Driver,
		Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{},
		Capacity:   map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{}}
	for domain, names := range in.Attributes {
		for name, typed := range names {
			value, err := attribute(typed)
			if err != nil {
				return out, err
			}
			out.Attributes[resourceapi.QualifiedName(domain+"/"+name)] = value
		}
	}
	for domain, names := range in.Capacity {
		for name, text := range names {
			quantity, err := resource.ParseQuantity(text)
			if err != nil {
				return out, fmt.Errorf("capacity %s/%s: %w", domain, name, err)
			}
			out.Capacity[resourceapi.QualifiedName(domain+"/"+name)] =
				resourceapi.DeviceCapacity{Value: quantity}
		}
	}
	return out, nil
}

func evaluate(cache *cel.Cache, line []byte) answer {
	var in request
	if err := json.Unmarshal(line, &in); err != nil {
		return answer{Outcome: "bad_request", Message: err.Error()}
	}
	compiled := cache.GetOrCompile(in.Expr)
	if compiled.Error != nil {
		return answer{Outcome: "compile_error", Message: compiled.Error.Error()}
	}
	input := cel.Device{}
	if in.Device != nil {
		var err error
		if input, err = celDevice(in.Device); err != nil {
			return answer{Outcome: "bad_request", Message: err.Error()}
		}
	}
	matches, _, err := compiled.DeviceMatches(context.Background(), input)
	if err != nil {
		return answer{Outcome: "error", Message: cel.EnhanceRuntimeError(err).Error()}
	}
	return answer{Outcome: strconv.FormatBool(matches)}
}

func main() {
	cache := cel.NewCache(10, cel.Features{EnableConsumableCapacity: true})
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
			fmt.Fprintln(os.Stderr, "cel-oracle:", err)
			os.Exit(1)
		}
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "cel-oracle: reading stdin:", err)
		os.Exit(1)
	}
}
