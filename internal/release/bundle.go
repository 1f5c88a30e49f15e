package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/hubd/hubd/internal/configdata"
)

// File is one Unit's data in a bundle.
type File struct {
	Name string
	Data []byte
}

// Extension is the file extension of a ToolchainType's data in a bundle.
func Extension(toolchain string) string {
	switch toolchain {
	case configdata.KubernetesYAML, configdata.AppConfigYAML:
		return "yaml"
	case configdata.AppConfigJSON:
		return "json"
	case configdata.AppConfigTOML:
		return "toml"
	case configdata.AppConfigINI:
		return "ini"
	case configdata.AppConfigProperties:
		return "properties"
	case configdata.AppConfigEnv:
		return "env"
	default:
		return "txt"
	}
}

// Bundle is a built bundle: the gzip tarball, its digest, and the OCI image manifest whose one layer it is.
type Bundle struct {
	Tarball        []byte
	Digest         digest.Digest
	Manifest       []byte
	ManifestDigest digest.Digest
}

// ArtifactType is the artifactType of a bundle's manifest: an OCI artifact whose config is empty names
// what it is there.
const ArtifactType = "application/vnd.hubd.release.v1"

// Build makes the bundle of files, named name (its layer's title, the file name oras pull writes it to).
// It is reproducible: the same files and name give the same bytes, whatever the files' order and whenever
// it runs (sorted entries; fixed times, modes and owners; a gzip header without time or name; no
// creation time in the manifest), so a pull can be checked against the published Digest.
func Build(name string, files []File) (Bundle, error) {
	files = append([]File(nil), files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return Bundle{}, err
	}
	tw := tar.NewWriter(zw)
	epoch := time.Unix(0, 0).UTC()
	for _, f := range files {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.Name, Mode: 0o644, Size: int64(len(f.Data)), ModTime: epoch,
			Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return Bundle{}, fmt.Errorf("bundle entry %s: %w", f.Name, err)
		}
		if _, err := tw.Write(f.Data); err != nil {
			return Bundle{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return Bundle{}, err
	}
	if err := zw.Close(); err != nil {
		return Bundle{}, err
	}
	b := Bundle{Tarball: buf.Bytes(), Digest: digest.FromBytes(buf.Bytes())}
	b.Manifest, err = json.Marshal(ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactType,
		Config:       ocispec.DescriptorEmptyJSON,
		Layers: []ocispec.Descriptor{{MediaType: ocispec.MediaTypeImageLayerGzip, Digest: b.Digest, Size: int64(len(b.Tarball)),
			Annotations: map[string]string{ocispec.AnnotationTitle: name + ".tar.gz"}}},
	})
	if err != nil {
		return Bundle{}, err
	}
	b.ManifestDigest = digest.FromBytes(b.Manifest)
	return b, nil
}
