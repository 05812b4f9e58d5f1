package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// goTestJSON runs the fixture module's tests with go test -json and returns the stream.
func goTestJSON(t *testing.T, env ...string) []byte {
	t.Helper()
	return goTestJSONRun(t, ".", env...)
}

// goTestJSONRun is goTestJSON limited to the tests run matches.
func goTestJSONRun(t *testing.T, run string, env ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", "test", "-count=1", "-json", "-run", run, ".")
	cmd.Dir = "testdata/fixture"
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.Output()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("go test: %v", err)
	}
	if len(out) == 0 {
		t.Fatal("go test -json wrote nothing")
	}
	return out
}

// TestReport_ShowsFailuresAndTheSlowest: on a real go test -json stream, the output of
// failing tests is written, that of passing ones is not, the package's FAIL line comes
// through, and the slowest list names the test that slept.
func TestReport_ShowsFailuresAndTheSlowest(t *testing.T) {
	var out bytes.Buffer
	if err := report(bytes.NewReader(goTestJSON(t)), &out, 2); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"shown: why it failed", "shown: the failing subtest", "--- FAIL: TestFails", "FAIL\tfixture",
		"testreport: the 2 slowest tests"} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "held-and-dropped") || strings.Contains(got, "shown: output before the crash") {
		t.Errorf("report shows a passing test's output:\n%s", got)
	}
	// TestPasses slept 300 ms; it heads the list.
	if !regexp.MustCompile(`testreport: the 2 slowest tests\n +0\.[3-9]\d*  fixture TestPasses\n`).MatchString(got) &&
		!regexp.MustCompile(`testreport: the 2 slowest tests\n +[1-9][0-9.]*  fixture TestPasses\n`).MatchString(got) {
		t.Errorf("the slowest test is not TestPasses first:\n%s", got)
	}
}

// TestReport_WritesWhatNeverEnded: a test binary that exits mid-test leaves that test
// without a verdict; its held output is written when the package ends.
func TestReport_WritesWhatNeverEnded(t *testing.T) {
	var out bytes.Buffer
	if err := report(bytes.NewReader(goTestJSON(t, "FIXTURE_CRASH=1")), &out, 5); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "shown: output before the crash") || !strings.Contains(got, "FAIL\tfixture") {
		t.Errorf("the crashed test's output or the package's FAIL line is missing:\n%s", got)
	}
}

// TestReport_BoundsHeldOutput: a test that writes more than maxHeld keeps only the
// last part, with a note of what was left out.
func TestReport_BoundsHeldOutput(t *testing.T) {
	var in bytes.Buffer
	line := strings.Repeat("x", 1000) + "\n"
	in.WriteString(`{"Action":"run","Package":"p","Test":"TestBig"}` + "\n")
	for range 2 * maxHeld / len(line) {
		in.WriteString(`{"Action":"output","Package":"p","Test":"TestBig","Output":"` + strings.TrimSuffix(line, "\n") + `\n"}` + "\n")
	}
	in.WriteString(`{"Action":"output","Package":"p","Test":"TestBig","Output":"the last line\n"}` + "\n")
	in.WriteString(`{"Action":"fail","Package":"p","Test":"TestBig","Elapsed":1}` + "\n")
	var out bytes.Buffer
	if err := report(&in, &out, 0); err != nil {
		t.Fatal(err)
	}
	if out.Len() > maxHeld+200 || !strings.Contains(out.String(), "the last line") || !strings.Contains(out.String(), "earlier lines of this test's output left out") {
		t.Errorf("%d bytes written; last line kept %v", out.Len(), strings.Contains(out.String(), "the last line"))
	}
}

// TestReport_PassingPackageIsOneLine: a package whose tests all pass is its ok line
// alone, as plain go test prints it (go test -json runs binaries verbose, which also
// says PASS).
func TestReport_PassingPackageIsOneLine(t *testing.T) {
	var out bytes.Buffer
	if err := report(bytes.NewReader(goTestJSONRun(t, "^TestPasses$")), &out, 0); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !regexp.MustCompile(`^ok  \tfixture\t[0-9.]+s\n$`).MatchString(got) {
		t.Errorf("report of a passing package:\n%q", got)
	}
}
