"""Apache Beam pipelines: one package per benchmark, source readers, shared media transforms."""
