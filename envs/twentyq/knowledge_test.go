package twentyq

import (
	"math"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
)

func TestKnowledgeBaseSize(t *testing.T) {
	k := kb()
	if len(k.objects) < 300 {
		t.Errorf("%d objects, want at least 300", len(k.objects))
	}
	attributes := len(booleanAttributes) + len(ordinalAttributes) + len(setAttributes)
	if attributes < 30 {
		t.Errorf("%d attributes, want at least 30", attributes)
	}
	for _, o := range k.objects {
		if got := len(o.bools) + len(o.levels) + len(o.sets); got != attributes {
			t.Errorf("%s has %d attribute values, want %d", o.name, got, attributes)
		}
	}
}

// TestEveryPairOfObjectsDiffers guarantees that questions alone can single
// out any object, which the expert's 100% success relies on.
func TestEveryPairOfObjectsDiffers(t *testing.T) {
	k := kb()
	for i := range k.objects {
	pairs:
		for j := i + 1; j < len(k.objects); j++ {
			for p := range k.props {
				if k.answers[p][i] != k.answers[p][j] {
					continue pairs
				}
			}
			t.Errorf("no question tells %s from %s", k.objects[i].name, k.objects[j].name)
		}
	}
}

func TestEveryPropositionSplitsObjects(t *testing.T) {
	k := kb()
	for p, prop := range k.props {
		yesCount := k.yesSet[p].count()
		noCount := len(k.objects) - yesCount - k.unknown[p].count()
		if yesCount == 0 || noCount == 0 {
			t.Errorf("%q: %d yes, %d no; a question must tell some objects apart", prop.question, yesCount, noCount)
		}
	}
}

func TestUnknownAnswersAreRare(t *testing.T) {
	k := kb()
	unknownCount := 0
	for p := range k.props {
		unknownCount += k.unknown[p].count()
	}
	if frac := float64(unknownCount) / float64(len(k.props)*len(k.objects)); frac > 0.02 {
		t.Errorf("%.1f%% of answers are unknown, want at most 2%%", 100*frac)
	}
}

func TestSplitPools(t *testing.T) {
	k := kb()
	seen := map[int]envs.Split{}
	categories := map[envs.Split]map[string]bool{}
	for _, split := range envs.Splits {
		categories[split] = map[string]bool{}
		for _, o := range k.pools[split] {
			if prev, dup := seen[o]; dup {
				t.Errorf("%s is in %s and %s", k.objects[o].name, prev, split)
			}
			seen[o] = split
			categories[split][k.objects[o].category] = true
			if got := isUnseenCategory(k.objects[o].category); got != (split == envs.Unseen) {
				t.Errorf("%s (%s) is in split %s", k.objects[o].name, k.objects[o].category, split)
			}
		}
	}
	if len(seen) != len(k.objects) {
		t.Errorf("splits hold %d of %d objects", len(seen), len(k.objects))
	}
	for c := range categories[envs.Train] {
		if !categories[envs.Test][c] {
			t.Errorf("category %s is in train but not in test", c)
		}
	}
	if frac := float64(len(k.pools[envs.Unseen])) / float64(len(k.objects)); frac < 0.12 || frac > 0.2 {
		t.Errorf("unseen holds %.0f%% of the objects, want about 15%%", 100*frac)
	}
	if frac := float64(len(k.pools[envs.Test])) / float64(len(k.pools[envs.Train])+len(k.pools[envs.Test])); math.Abs(frac-1.0/3) > 0.05 {
		t.Errorf("test holds %.0f%% of the seen objects, want about a third", 100*frac)
	}
}

// TestAmbiguousNames pins the object names that are also words of a
// question; each needs an article to count as a guess ("Is it an orange?"
// against "Is it orange?"), so a new one should be a deliberate choice.
func TestAmbiguousNames(t *testing.T) {
	var got []string
	for name := range kb().matcher.ambiguous {
		got = append(got, name)
	}
	if strings.Join(got, ",") != "orange" {
		t.Errorf("ambiguous names %v, want [orange]", got)
	}
}

func TestMalformedObjectData(t *testing.T) {
	cases := map[string]string{
		"object before category": "dog | | size=small",
		"unknown attribute":      "[c] legs=0 wheels=0 size=small color=red material=none place=farm purpose=none bodypart=none\nx | | flavour",
		"unknown level":          "[c] legs=0 wheels=0 color=red material=none place=farm purpose=none bodypart=none\nx | | size=gigantic",
		"unknown set value":      "[c] legs=0 wheels=0 size=small material=none place=farm purpose=none bodypart=none\nx | | color=plaid",
		"missing size":           "[c] legs=0 wheels=0 color=red material=none place=farm purpose=none bodypart=none\nx | |",
		"missing field":          "[c] legs=0 wheels=0 size=small color=red material=none place=farm purpose=none bodypart=none\nx | alive",
		"duplicate name":         "[c] legs=0 wheels=0 size=small color=red material=none place=farm purpose=none bodypart=none\nx | y |\nz | x |",
		"unclosed category":      "[c legs=0",
	}
	for name, text := range cases {
		if _, err := buildKnowledgeBase(text); err == nil {
			t.Errorf("%s: no error for %q", name, text)
		}
	}
	good := "[c] legs=0 wheels=0 size=small color=red material=none place=farm purpose=none bodypart=none\nx | y | alive\nz | | -alive"
	if _, err := buildKnowledgeBase(good); err != nil {
		t.Errorf("well-formed data: %v", err)
	}
}
