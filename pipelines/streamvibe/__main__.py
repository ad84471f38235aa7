from pipelines.streamvibe.build import STREAMVIBE

STREAMVIBE.main()
