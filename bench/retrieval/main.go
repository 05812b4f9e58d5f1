package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "retrieval:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("retrieval", flag.ContinueOnError)
	data := fs.String("data", defaultData(), "directory with catalog.json, queries.txt, heldout.txt, offtopic.txt, spec/, mcp/, mcp_queries.txt, the multilingual catalogs (mcp_cjk/, mcp_heldout/) and their sets")
	gen := fs.Bool("gen", false, "regenerate catalog.json from spec/*.txt and exit")
	verbose := fs.String("v", "", "also list the queries this search configuration did not rank first")
	jsonOut := fs.String("json", "", "also write the figures to this file as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *gen {
		b, err := generate(*data)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(*data, "catalog.json"), b, 0o644)
	}
	rep, err := evaluate(*data)
	if err != nil {
		return err
	}
	rep.markdown(stdout)
	ml, err := evaluateMultilingual(*data)
	if err != nil {
		return err
	}
	rep.Multilingual = ml
	for _, m := range ml {
		m.markdown(stdout)
	}
	if *verbose != "" {
		rep.misses(stdout, *verbose)
	}
	if *jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(*jsonOut, append(b, '\n'), 0o644)
	}
	return nil
}

// defaultData finds testdata from the repository root or from this directory.
func defaultData() string {
	if _, err := os.Stat("bench/retrieval/testdata"); err == nil {
		return "bench/retrieval/testdata"
	}
	return "testdata"
}

// generate builds catalog.json's bytes from the spec files, in file-name order.
func generate(dir string) ([]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "spec", "*.txt"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	shared := map[string]specParam{}
	var tools []specTool
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		ts, err := parseSpec(r, f, shared)
		r.Close()
		if err != nil {
			return nil, err
		}
		tools = append(tools, ts...)
	}
	var b bytes.Buffer
	if err := writeCatalog(&b, tools); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
