package index

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrUnknownVersion is returned by Activate for a version that the directory does not hold complete.
var ErrUnknownVersion = errors.New("unknown index version")

// Version is one complete version under an index directory.
type Version struct {
	// Version is the manifest's content version; its directory is "v-" + Version.
	Version string
	// Current says CURRENT names it.
	Current bool
	// Manifest is the version's manifest without Hashes (one entry per page, which a listing does not need).
	Manifest Manifest
}

// Versions lists the complete versions under dir, the most recently built first. Directories that are not a
// complete version (no readable manifest, or a data file missing) are left out.
func Versions(dir string) ([]Version, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("index versions %s: %w", dir, ErrNoIndex)
	}
	if err != nil {
		return nil, fmt.Errorf("index versions %s: %w", dir, err)
	}
	current, _ := readCurrent(dir)
	var out []Version
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() || !strings.HasPrefix(n, versionPrefix) {
			continue
		}
		v, err := readVersion(dir, n)
		if err != nil {
			continue
		}
		v.Current = n == current
		out = append(out, v)
	}
	sortVersions(out)
	return out, nil
}

// Activate makes version (a manifest version, without the "v-") the current one under dir by replacing CURRENT
// atomically, as Write does: readers that poll CURRENT switch to it. The version must be complete; its data is
// checked in full by the reader that loads it. It returns ErrUnknownVersion when dir does not hold it.
func Activate(dir, version string) error {
	name := versionPrefix + version
	if version == "" || strings.ContainsAny(version, `/\`) || strings.HasPrefix(version, ".") {
		return fmt.Errorf("activate index version %q: %w", version, ErrUnknownVersion)
	}
	if _, err := readVersion(dir, name); err != nil {
		return fmt.Errorf("activate index version %q: %w (%v)", version, ErrUnknownVersion, err)
	}
	if err := writeFileAtomic(filepath.Join(dir, currentFile), []byte(name+"\n")); err != nil {
		return fmt.Errorf("activate index version %q: %w", version, err)
	}
	return nil
}

// readVersion reads the manifest of the version directory name under dir and checks that the version's data
// files are there.
func readVersion(dir, name string) (Version, error) {
	var m Manifest
	if err := readJSON(filepath.Join(dir, name, manifestFile), &m); err != nil {
		return Version{}, err
	}
	if versionPrefix+m.Version != name {
		return Version{}, fmt.Errorf("%s: manifest names version %q", name, m.Version)
	}
	for _, f := range dataFiles(m.Format) {
		if _, err := os.Stat(filepath.Join(dir, name, f)); err != nil {
			return Version{}, err
		}
	}
	m.Hashes = nil
	return Version{Version: m.Version, Manifest: m}, nil
}

// dataFiles are the files a version in format f cannot be read without.
func dataFiles(f int) []string {
	if f == 0 {
		return []string{pagesFile, chunksFile, summariesFile, chunkVecFile}
	}
	return []string{pagesFile, chunkRecFile, textsFile, summariesFile, chunkVecFile}
}

// sortVersions orders vs by build time, the most recent first, then by version for a stable order.
func sortVersions(vs []Version) {
	sort.Slice(vs, func(i, j int) bool {
		if !vs[i].Manifest.BuiltAt.Equal(vs[j].Manifest.BuiltAt) {
			return vs[i].Manifest.BuiltAt.After(vs[j].Manifest.BuiltAt)
		}
		return vs[i].Version < vs[j].Version
	})
}
