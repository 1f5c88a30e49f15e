package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"
)

func TestBuildReproducible(t *testing.T) {
	a, err := Build("shop", []File{{Name: "b.yaml", Data: []byte("x: 1\n")}, {Name: "a.env", Data: []byte("A=1\n")}})
	require.NoError(t, err)
	b, err := Build("shop", []File{{Name: "a.env", Data: []byte("A=1\n")}, {Name: "b.yaml", Data: []byte("x: 1\n")}})
	require.NoError(t, err)
	require.Equal(t, a.Tarball, b.Tarball)
	require.Equal(t, a.ManifestDigest, b.ManifestDigest)
	require.Equal(t, "sha256", string(a.Digest.Algorithm()))

	zr, err := gzip.NewReader(bytes.NewReader(a.Tarball))
	require.NoError(t, err)
	require.True(t, zr.ModTime.IsZero())
	require.Empty(t, zr.Name)
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		require.Equal(t, int64(0o644), h.Mode)
		require.Equal(t, int64(0), h.ModTime.Unix())
		names = append(names, h.Name)
	}
	require.Equal(t, []string{"a.env", "b.yaml"}, names)

	var m ocispec.Manifest
	require.NoError(t, json.Unmarshal(a.Manifest, &m))
	require.Equal(t, ocispec.MediaTypeImageManifest, m.MediaType)
	require.Equal(t, a.Digest, m.Layers[0].Digest)
	require.Equal(t, ocispec.MediaTypeImageLayerGzip, m.Layers[0].MediaType)
	require.Equal(t, "shop.tar.gz", m.Layers[0].Annotations[ocispec.AnnotationTitle])
	require.Equal(t, ArtifactType, m.ArtifactType)
	require.Equal(t, ocispec.DescriptorEmptyJSON.Digest, m.Config.Digest)
}
