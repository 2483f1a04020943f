package atomic_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestGoDocListsLongMethods runs go doc as a user does. Long is an alias
// of the generic Number, so "go doc atomic.Long.Add" finds nothing (issue
// 36, item 4) and go doc lists the methods under Number only; the package
// documentation lists every method of Number as Long's, with Long's
// signature, so that a method added to Number and not listed fails here.
func TestGoDocListsLongMethods(t *testing.T) {
	number := goDoc(t, "-all", ".", "Number")
	methodRe := regexp.MustCompile(`(?m)^func \(n \*Number\[T\]\) (\w+)(\(.*)$`)
	methods := methodRe.FindAllStringSubmatch(number, -1)
	if len(methods) == 0 {
		t.Fatalf("go doc lists no methods of Number:\n%s", number)
	}
	pkg := goDoc(t, ".")
	for _, m := range methods {
		want := "Long." + m[1] + longSignature(m[2])
		if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(want) + `(\s|$)`).MatchString(pkg) {
			t.Errorf("go doc of the package does not list %q", want)
		}
	}
	if t.Failed() {
		t.Logf("go doc .:\n%s", pkg)
	}
	// The way to the full documentation that the list names works.
	if out := goDoc(t, ".", "Number.Add"); !strings.Contains(out, "func (n *Number[T]) Add(") {
		t.Errorf("go doc Number.Add printed:\n%s", out)
	}
}

// longSignature turns a Number method's parameters and results, as go
// doc prints them, into Long's, as the package documentation writes them:
// "(ctx context.Context, delta T) (T, error)" is "(ctx, delta int64) (int64, error)".
func longSignature(sig string) string {
	sig = strings.ReplaceAll(sig, "ctx context.Context", "ctx")
	return regexp.MustCompile(`\bT\b`).ReplaceAllString(sig, "int64")
}

func goDoc(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"doc"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go doc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
