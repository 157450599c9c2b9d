package math

import (
	"strings"
	"testing"
)

func TestEvaluate(t *testing.T) {
	cases := map[string]string{
		"1+2*3":                 "7",
		"(1+2)*3":               "9",
		"48/2":                  "24",
		"10/4":                  "2.5",
		"10/4*4":                "10",
		"1/3":                   "0.333333",
		"2/3":                   "0.666667",
		"0.1+0.2":               "0.3",
		"-5+3":                  "-2",
		"--5":                   "5",
		"-(2+3)*2":              "-10",
		"+7":                    "7",
		" 3 * ( 4 + 5 ) ":       "27",
		"$1,200 - $200":         "1000",
		"1,200*2":               "2400",
		"80*25%":                "20",
		"50%":                   "0.5",
		"3×4÷6":                 "2",
		"3 x 4":                 "12",
		".5+.5":                 "1",
		"5.":                    "5",
		"100-99.999":            "0.001",
		"2*(3*(4*(5+1)))":       "144",
		"7/7/7":                 "0.142857",
		"1000000*1000000":       "1000000000000",
		"-0.0000001":            "0",
		"12 − 5":                "7",
		"((((((((((1))))))))))": "1",
	}
	for expr, want := range cases {
		v, err := evaluate(expr)
		if err != nil {
			t.Errorf("evaluate(%q): %v", expr, err)
			continue
		}
		if got := formatNumber(v); got != want {
			t.Errorf("evaluate(%q) = %s, want %s", expr, got, want)
		}
	}
}

func TestEvaluateErrors(t *testing.T) {
	cases := map[string]string{
		"":        "empty",
		"   ":     "empty",
		"1/0":     "division by zero",
		"1/(2-2)": "division by zero",
		"(1+2":    "missing )",
		"1+2)":    "unexpected )",
		"1+":      "ends where a number",
		"2(3)":    "unexpected",
		"abc":     "unexpected",
		"1..2":    "unexpected",
		"$":       "after $",
		"1 2":     "unexpected",
		"sqrt(4)": "unexpected",
		strings.Repeat("(", 60) + "1" + strings.Repeat(")", 60): "nested",
		strings.Repeat("-", 60) + "1":                           "nested",
		strings.Repeat("9", 31):                                 "digits",
		strings.Repeat("9", 501):                                "longer than",
		strings.Repeat("999999999*", 49) + "9":                  "too large",
	}
	for expr, want := range cases {
		_, err := evaluate(expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("evaluate(%.40q): error %v, want one containing %q", expr, err, want)
		}
	}
}

// FuzzEvaluate checks that the calculator never panics, that its results
// stay bounded, and that a whole result reads back as itself.
func FuzzEvaluate(f *testing.F) {
	f.Fuzz(func(t *testing.T, expr string) {
		v, err := evaluate(expr)
		if err != nil {
			return
		}
		if v.Num().BitLen() > 2000 || v.Denom().BitLen() > 2000 {
			t.Fatalf("%q: result of %d bits", expr, v.Num().BitLen())
		}
		if v.IsInt() && v.Num().BitLen() < 90 {
			back, err := evaluate(formatNumber(v))
			if err != nil || back.Cmp(v) != 0 {
				t.Fatalf("%q = %s reads back as %v (%v)", expr, formatNumber(v), back, err)
			}
		}
		if s := formatNumber(v); s == "" || s == "-0" {
			t.Fatalf("%q formats as %q", expr, s)
		}
	})
}
