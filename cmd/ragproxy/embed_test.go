package main

import (
	"strings"
	"testing"
)

func TestServeFlagsEmbed(t *testing.T) {
	f, err := parseServeFlags([]string{"--embed-origins", "https://www.example.edu, https://news.example.edu/",
		"--api-keys", "sk-client", "--widget-keys", "pk_site", "--widget-rpm", "6"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := f.cfg.Server.Embed
	if strings.Join(cfg.Origins, " ") != "https://www.example.edu https://news.example.edu" ||
		strings.Join(cfg.Keys, " ") != "pk_site" || cfg.RequestsPerMinute != 6 {
		t.Errorf("embed config = %+v", cfg)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--embed-origins", "*"}, "--embed-origins"},
		{[]string{"--embed-origins", "www.example.edu"}, "--embed-origins"},
		{[]string{"--embed-origins", "https://www.example.edu", "--api-keys", "sk-client"}, "needs --widget-keys"},
		{[]string{"--api-keys", "sk-client", "--widget-keys", "sk-client"}, "--widget-keys"},
	} {
		if _, err := parseServeFlags(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseServeFlags(%q) = %v, want an error about %s", tc.args, err, tc.want)
		}
	}
}
