{
  "targets": [
    {
      "target_name": "gateway_native",
      "sources": ["src/addon.cc", "src/memory.cc", "src/accept.cc"]
    }
  ]
}
