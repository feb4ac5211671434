{
  "targets": [
    {
      "target_name": "release_memory",
      "sources": ["src/release.cc"]
    }
  ]
}
