// pcieroot prints, for every PCI function of a sysfs tree, the resource.kubernetes.io/pcieRoot
// and numaNode attributes Kubernetes' own helper (k8s.io/dynamic-resource-allocation/
// deviceattribute) computes there, so that topoguard's inventory can be checked against it:
//
//	pcieroot SYSFS_ROOT
//
// One JSON object per line: {"pciBusID": ..., "pcieRoot": ... | "pcieRootError": ...,
// "numaNode": N | "numaNodeError": ...}. The helper takes the tree through WithFSFromRoot, its
// documented option for testing and containers; nothing here computes a root itself.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"k8s.io/dynamic-resource-allocation/deviceattribute"
)

type entry struct {
	PCIBusID      string `json:"pciBusID"`
	PCIeRoot      string `json:"pcieRoot,omitempty"`
	PCIeRootError string `json:"pcieRootError,omitempty"`
	NUMANode      *int64 `json:"numaNode,omitempty"`
	NUMANodeError string `json:"numaNodeError,omitempty"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: pcieroot SYSFS_ROOT")
		os.Exit(2)
	}
	root := os.Args[1]
	names, err := os.ReadDir(filepath.Join(root, "bus", "pci", "devices"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "pcieroot:", err)
		os.Exit(1)
	}
	busIDs := make([]string, 0, len(names))
	for _, name := range names {
		busIDs = append(busIDs, name.Name())
	}
	sort.Strings(busIDs)
	out := json.NewEncoder(os.Stdout)
	for _, busID := range busIDs {
		result := entry{PCIBusID: busID}
		fromRoot := deviceattribute.WithFSFromRoot(root)
		if attr, err := deviceattribute.GetPCIeRootAttributeByPCIBusID(busID, fromRoot); err != nil {
			result.PCIeRootError = err.Error()
		} else {
			result.PCIeRoot = *attr.Value.StringValue
		}
		attr, err := deviceattribute.GetNUMANodeAttributeByPCIBusID(busID, deviceattribute.ScalarAttribute, fromRoot)
		if err != nil {
			result.NUMANodeError = err.Error()
		} else {
			result.NUMANode = attr.Value.IntValue
		}
		if err := out.Encode(result); err != nil {
			fmt.Fprintln(os.Stderr, "pcieroot:", err)
			os.Exit(1)
		}
	}
}
