from pipelines.streamvibe.build import main

main()
